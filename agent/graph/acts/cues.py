"""The words a turn is read by: per-language cue lists (prompts/<lang>/words/acts.json, each with English's, since
people mix English into every language), the currency words, and a message's sentences and clauses ("ok let's do 2
epochs, how long will that take?" says "ok let's do 2 epochs," before its closing question)."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from agent.lexicon import language_words
from contract.languages import supported_or_default

CLAUSE_END = re.compile(r"[.;:!?](?=\s|$)|,(?=\s)|\s[-–—]\s")
"""Where a clause ends: a stop, a colon or a question mark, a comma before a space (not "2,5"), a dash between
spaces."""


def before_closing_question(text: str) -> str | None:
    """The clauses before the last one when the message ends with a question mark (with the mark that ends them);
    None when it does not, or when it is one clause."""
    stripped = text.strip()
    if not stripped.endswith("?"):
        return None
    ends = [m.end() for m in CLAUSE_END.finditer(stripped[:-1])]
    return stripped[: ends[-1]] if ends else None


def acts_words(language: str) -> list[dict[str, Any]]:
    """The act word lists (prompts/<lang>/words/acts.json) of the language, then English's (people mix English
    words into every language): each reader joins the lists it needs from them."""
    return [language_words(lang, "acts") for lang in dict.fromkeys((supported_or_default(language), "en"))]


@cache
def cue_patterns(language: str) -> dict[str, re.Pattern[str]]:
    """Compiled cue lists of one language together with English (people mix English words into every language)."""
    merged: dict[str, list[str]] = {}
    for data in acts_words(language):
        for name, patterns in data.items():
            if isinstance(patterns, list):
                merged.setdefault(name, []).extend(patterns)
    return {
        name: re.compile(r"(?<![\w])(?:" + "|".join(f"(?:{p})" for p in patterns) + r")(?![\w])", re.I)
        for name, patterns in merged.items()
    }


@cache
def _currency_words(language: str) -> dict[str, re.Pattern[str]]:
    """Currency code -> pattern of the words naming it (the language's and English)."""
    words: dict[str, list[str]] = {}
    for data in acts_words(language):
        for code, patterns in data["currencies"].items():
            words.setdefault(code, []).extend(patterns)
    return {code: re.compile(r"(?<![\w])(?:" + "|".join(p) + r")(?![\w])", re.I) for code, p in words.items()}


def has(cue: str, text: str, language: str) -> bool:
    """Whether a cue list of the language matches the text."""
    pattern = cue_patterns(language).get(cue)
    return bool(pattern and pattern.search(text))


def currency_asked(text: str, language: str) -> str | None:
    """The currency a question asks the total in ("how much is that in rupiah?"), if any."""
    for code, pattern in _currency_words(language).items():
        if pattern.search(text):
            return code
    return None


def sentences(text: str, *, colon: bool = False) -> list[str]:
    """The message's sentences (split after . ? ! ; and, with `colon`, after ':' as well), blank ones dropped."""
    marks = ".?!;:" if colon else ".?!;"
    return [c for c in re.split(rf"(?<=[{marks}])\s+|\n+", text) if c.strip()]
