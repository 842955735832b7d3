"""Turn text into BM25 terms per language: fold accents, split elisions, join compounds, drop stop-words, stem,
and map synonyms (kb/data/synonyms.json) onto one canonical term."""

from __future__ import annotations

import json
import re
import unicodedata
from functools import cache
from importlib import resources

import Stemmer

from contract.languages import REGISTRY
from kb.entries import LANGUAGES, Language, aliases, entries


@cache
def base_stopwords() -> dict[str, tuple[str, ...]]:
    """bm25s ships Italian and English lists; the Indonesian list is entirely ours (kb/data/stopwords.id.txt).
    Read from bm25s/stopwords.py alone: importing the bm25s package pulls in numpy (~0.3 s per command)."""
    import importlib.util
    import sys
    from pathlib import Path

    module = sys.modules.get("bm25s.stopwords")
    if module is None:
        locations = importlib.util.find_spec("bm25s").submodule_search_locations  # type: ignore[union-attr]
        spec = importlib.util.spec_from_file_location("_bm25s_stopwords", Path(next(iter(locations))) / "stopwords.py")
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return {
        code: tuple(getattr(module, info.bm25s_stopwords)) if info.bm25s_stopwords else ()
        for code, info in REGISTRY.items()
    }


MAX_QUERY_CHARS = 2000
"""Longer input is cut here before tokenizing, so a pasted essay cannot slow retrieval down."""
FRAGMENTS = frozenset({"fine", "pre", "multi", "on", "all", "per", "mid", "non", "inter", "intra", "re"})
"""Compound heads that mean little alone ('fine' in 'fine-tuning'): kept only inside the joined compound."""

PARAMETER_COUNT = re.compile(r"\d+(?:[.,]\d+)?[bm]")
"""Model sizes ('70b', '8b', '1.5b'): the KB's advice never depends on a named size, so they are not terms
(a size in the question must not pull it towards whichever entry happens to mention one)."""

_WORD = re.compile(r"[^\W_]+(?:-[^\W_]+)*")


def fold(text: str) -> str:
    """Lower-case and strip accents ('perché' -> 'perche'); apostrophes separate words ("l'addestramento")."""
    text = text.lower().replace("\u2019", " ").replace("'", " ").replace("`", " ")
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@cache
def compounds() -> frozenset[str]:
    """Joined forms of every hyphenated word in the KB ('finetuning', 'multigpu', 'ondemand')."""
    found: set[str] = set()
    for language in LANGUAGES:
        texts = [f"{e.title} {e.text}" for e in entries(language)]
        texts += [" ".join(phrases) for phrases in aliases(language).values()]
        for word in _WORD.findall(fold(" ".join(texts))):
            if "-" in word:
                found.add(word.replace("-", ""))
    return frozenset(found)


def words(text: str) -> list[str]:
    """Word tokens; compounds are joined whether written 'fine-tuning', 'fine tuning' or 'finetuning'."""
    joined_forms = compounds()
    out: list[str] = []
    previous: str | None = None
    for word in _WORD.findall(fold(text)):
        if "-" in word:
            parts = [p for p in word.split("-") if p]
            out.extend(p for p in parts if p not in FRAGMENTS and not p.isdigit())
            out.append("".join(parts))
            previous = None
            continue
        if previous is not None and previous + word in joined_forms:
            out.append(previous + word)
        if word not in FRAGMENTS and len(word) > 1 and not word.isdigit() and not PARAMETER_COUNT.fullmatch(word):
            out.append(word)
        previous = word
    return out


@cache
def stopwords(language: Language) -> frozenset[str]:
    """Stop-words of one language: bm25s's list (it, en) plus our colloquial additions (all of it for id)."""
    extra = resources.files(__package__).joinpath("data", f"stopwords.{language}.txt").read_text(encoding="utf-8")
    listed = [line.split("#", 1)[0].strip() for line in extra.splitlines()]
    return frozenset(fold(w).strip() for w in (*base_stopwords()[language], *listed) if w.strip())


@cache
def _stemmer(language: Language) -> Stemmer.Stemmer:
    """The Snowball stemmer of one language."""
    return Stemmer.Stemmer(REGISTRY[language].stemmer)


def _stems(text: str, language: Language) -> list[str]:
    """Folded, stop-word-free, stemmed words (no synonym mapping)."""
    stop = stopwords(language)
    return _stemmer(language).stemWords([w for w in words(text) if w not in stop])


@cache
def synonyms(language: Language) -> dict[str, tuple[str, ...]]:
    """Stem -> canonical stems, from the '*' and per-language tables of kb/data/synonyms.json."""
    table = json.loads(resources.files(__package__).joinpath("data", "synonyms.json").read_text(encoding="utf-8"))
    mapping: dict[str, tuple[str, ...]] = {}
    for word, canonical in {**table["*"], **table.get(language, {})}.items():  # a language may add none
        keys = _stems(word, language)
        if len(keys) == 1:
            mapping[keys[0]] = tuple(_stems(canonical, language)) or (keys[0],)
    return mapping


@cache
def _phrase_pattern(language: Language) -> tuple[re.Pattern[str] | None, dict[str, str]]:
    """One regex over the multi-word wordings of kb/data/synonyms.json "phrases" (longest first) and their targets."""
    table = json.loads(resources.files(__package__).joinpath("data", "synonyms.json").read_text(encoding="utf-8"))
    phrases = {" ".join(fold(k).split()): v for k, v in table.get("phrases", {}).get(language, {}).items()}
    if not phrases:
        return None, {}
    alternatives = "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in sorted(phrases, key=len, reverse=True))
    return re.compile(rf"(?<![^\W_])(?:{alternatives})(?![^\W_])"), phrases


def rewrite_phrases(text: str, language: Language) -> str:
    """Folded text with multi-word wordings replaced by the KB's words ('how many GPUs' -> 'multi-gpu gpus')."""
    pattern, phrases = _phrase_pattern(language)
    folded = fold(text)
    if pattern is None:
        return folded
    return pattern.sub(lambda m: phrases[" ".join(m.group(0).split())], folded)


def terms(text: str, language: Language) -> list[str]:
    """BM25 terms of `text` in `language`: folded, phrases rewritten, stop-words removed, stemmed, synonyms mapped."""
    mapping = synonyms(language)
    out: list[str] = []
    for stem in _stems(rewrite_phrases(text[:MAX_QUERY_CHARS], language), language):
        out.extend(mapping.get(stem, (stem,)))
    return out
