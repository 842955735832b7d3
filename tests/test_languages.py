"""The languages are defined once (contract/languages.py) and each is one folder, prompts/<code>/, holding every
text and word list written in it: the same files and the same keys in every language."""

from __future__ import annotations

import json
from pathlib import Path

from contract.languages import DEFAULT_LANGUAGE, LANGUAGES, NAMES, REGISTRY, supported_or_default

PROMPTS = Path(__file__).resolve().parents[1] / "prompts"


def files_of(code: str) -> set[str]:
    """The files of one language's folder, relative to it."""
    return {str(p.relative_to(PROMPTS / code)) for p in (PROMPTS / code).rglob("*") if p.is_file()}


def test_every_registered_language_has_a_folder_and_no_folder_is_unregistered() -> None:
    folders = {p.name for p in PROMPTS.iterdir() if p.is_dir() and not p.name.startswith("__")}
    assert folders == set(LANGUAGES) and set(REGISTRY) == set(NAMES) == set(LANGUAGES) and DEFAULT_LANGUAGE in LANGUAGES


def test_every_language_has_the_files_of_the_default_one() -> None:
    """A language folder holds what the default language's holds (only-English fallbacks excepted)."""
    english = files_of(DEFAULT_LANGUAGE) - {"faq_unsupported_language.txt"}
    assert english and all(english <= files_of(code) for code in LANGUAGES), {
        code: sorted(english - files_of(code)) for code in LANGUAGES
    }


def test_every_template_file_has_the_keys_of_the_default_one() -> None:
    """Answer templates and interface strings: a key missing in one language would fail at run time."""
    for name in sorted(f for f in files_of(DEFAULT_LANGUAGE) if f.endswith(".json") and not f.startswith("words/")):
        keys = set(json.loads((PROMPTS / DEFAULT_LANGUAGE / name).read_text(encoding="utf-8")))
        for code in LANGUAGES:
            missing = keys - set(json.loads((PROMPTS / code / name).read_text(encoding="utf-8")))
            assert not missing, f"{code}/{name} lacks {sorted(missing)}"


def test_an_unsupported_language_falls_back_to_the_default() -> None:
    assert supported_or_default("it") == "it" and supported_or_default("fr") == DEFAULT_LANGUAGE
    assert supported_or_default(None) == DEFAULT_LANGUAGE
