"""The languages gpu-advisor speaks, defined once. A language is this registry entry plus its folder
`prompts/<code>/` (answer templates, prompts, word lists, number and money words, Slack strings); CONTRIBUTING's
"A new language" walks through adding one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

Language = Literal["it", "id", "en"]
"""A supported language code (the type pydantic models and JSON schemas use)."""
LANGUAGES: tuple[Language, ...] = get_args(Language)
"""Every supported language, in the order lists show them."""
DEFAULT_LANGUAGE: Language = "en"
"""What an unsupported or unknown language falls back to."""


@dataclass(frozen=True)
class LanguageInfo:
    """What the code needs to know about a language beyond its folder."""

    name: str
    """Its English name (what LLM prompts say)."""
    stemmer: str
    """The Snowball stemmer PyStemmer applies to it (knowledge-base retrieval)."""
    bm25s_stopwords: str | None
    """The name of bm25s's stop-word list for it, or None when kb/data/stopwords.<code>.txt is the whole list."""


REGISTRY: dict[str, LanguageInfo] = {
    "it": LanguageInfo("Italian", "italian", "STOPWORDS_ITALIAN"),
    "id": LanguageInfo("Indonesian", "indonesian", None),
    "en": LanguageInfo("English", "english", "STOPWORDS_EN"),
}
"""One entry per language in LANGUAGES (tests/test_languages.py checks they agree)."""
NAMES: dict[str, str] = {code: info.name for code, info in REGISTRY.items()}
"""Each language's English name."""


def supported_or_default(language: str | None) -> Language:
    """`language` when it is supported, else the default language."""
    for code in LANGUAGES:
        if language == code:
            return code
    return DEFAULT_LANGUAGE
