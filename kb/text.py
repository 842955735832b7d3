"""Turn text into BM25 terms per language: fold accents, split elisions and hyphens, drop stop-words, stem."""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from importlib import resources

import Stemmer
from bm25s.stopwords import STOPWORDS_EN, STOPWORDS_ITALIAN

from kb.entries import Language

STEMMER_NAMES: dict[str, str] = {"it": "italian", "id": "indonesian", "en": "english"}
BASE_STOPWORDS: dict[str, tuple[str, ...]] = {"it": tuple(STOPWORDS_ITALIAN), "id": (), "en": tuple(STOPWORDS_EN)}
"""bm25s ships Italian and English lists; the Indonesian list is entirely ours (kb/data/stopwords.id.txt)."""
MAX_QUERY_CHARS = 2000
"""Longer input is cut here before tokenizing, so a pasted essay cannot slow retrieval down."""

_WORD = re.compile(r"[^\W_]+(?:-[^\W_]+)*")


def fold(text: str) -> str:
    """Lower-case and strip accents ('perché' -> 'perche'), map typographic apostrophes to spaces."""
    text = text.lower().replace("\u2019", " ").replace("'", " ").replace("`", " ")
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def words(text: str) -> list[str]:
    """Word tokens; a hyphenated word yields its parts and the joined form ('multi-gpu' -> multi, gpu, multigpu)."""
    out: list[str] = []
    for word in _WORD.findall(fold(text)):
        if "-" in word:
            parts = [p for p in word.split("-") if p]
            out.extend(parts)
            out.append("".join(parts))
        else:
            out.append(word)
    return out


@cache
def stopwords(language: Language) -> frozenset[str]:
    """Stop-words of one language: bm25s's list (it, en) plus our colloquial additions (all of it for id)."""
    extra = resources.files(__package__).joinpath("data", f"stopwords.{language}.txt").read_text(encoding="utf-8")
    listed = [line.split("#", 1)[0].strip() for line in extra.splitlines()]
    return frozenset(fold(w).strip() for w in (*BASE_STOPWORDS[language], *listed) if w.strip())


@cache
def _stemmer(language: Language) -> Stemmer.Stemmer:
    """The Snowball stemmer of one language."""
    return Stemmer.Stemmer(STEMMER_NAMES[language])


def terms(text: str, language: Language) -> list[str]:
    """BM25 terms of `text` in `language`: folded, stop-words removed, stemmed."""
    stop = stopwords(language)
    kept = [w for w in words(text[:MAX_QUERY_CHARS]) if w not in stop]
    return _stemmer(language).stemWords(kept)
