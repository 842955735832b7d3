"""The languages gpu-advisor speaks, defined once. A language is this registry entry plus its folder
`prompts/<code>/` (answer templates, prompts, word lists, number and money words, Slack strings); CONTRIBUTING's
"A new language" walks through adding one."""

from __future__ import annotations

from typing import Literal, get_args

Language = Literal["it", "id", "en"]
"""A supported language code (the type pydantic models and JSON schemas use)."""
LANGUAGES: tuple[Language, ...] = get_args(Language)
"""Every supported language, in the order lists show them."""
DEFAULT_LANGUAGE: Language = "en"
"""What an unsupported or unknown language falls back to."""
NAMES: dict[str, str] = {"it": "Italian", "id": "Indonesian", "en": "English"}
"""Each language's English name (what LLM prompts say)."""


def supported_or_default(language: str | None) -> Language:
    """`language` when it is supported, else the default language."""
    for code in LANGUAGES:
        if language == code:
            return code
    return DEFAULT_LANGUAGE
