"""Text users see carries no internal references: repository paths and reference-file sections ("via hardware.md
§4", "shared/data/…/SOURCE.md") are dropped from tool texts, keeping the public sources they point to."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_DROPS = (
    re.compile(r"\s*\bat the commits pinned in \S*?SOURCE\.md"),  # the catalog's source line
    re.compile(r"\s*\bvia [\w-]+\.md(?:\s*§\s*[\d.]*\d(?:\s*,\s*§\s*[\d.]*\d)*)?"),  # "via hardware.md §4"
    re.compile(r"\b[\w-]+\.md(?:\s*§\s*[\d.]*\d(?:\s*,\s*§\s*[\d.]*\d)*)?\s*;?\s*"),  # "(hardware.md §3, §6; AWS …"
    re.compile(r"(?:/work/)?\bshared/[\w./<>-]+"),  # any other path into the shared reference folder
)
_TIDY = (
    (re.compile(r"\(\s*\)"), ""),
    (re.compile(r"\(\s*[;,]\s*"), "("),
    (re.compile(r"\s+([);,])"), r"\1"),
    (re.compile(r"  +"), " "),
)


def public_text(text: str) -> str:
    """The text without internal paths or reference-file sections (unchanged when it has none)."""
    if ".md" not in text and "shared/" not in text:
        return text
    return _cleaned(text)


@lru_cache(maxsize=4096)
def _cleaned(text: str) -> str:
    """public_text for a text that may hold a reference (the same tool texts recur turn after turn)."""
    for pattern in _DROPS:
        text = pattern.sub("", text)
    for pattern, replacement in _TIDY:
        text = pattern.sub(replacement, text)
    return text.strip()


_LEAVES = (int, float, bool, type(None))


def public(value: Any) -> Any:
    """A JSON-like value (dicts, lists, strings) with every string made public; other values unchanged."""
    kind = type(value)
    if kind is str:
        return public_text(value)
    if kind is dict:
        return {key: item if type(item) in _LEAVES else public(item) for key, item in value.items()}
    if kind is list:
        return [item if type(item) in _LEAVES else public(item) for item in value]
    if isinstance(value, str | dict | list):  # subclasses: the same, more slowly
        return (
            public_text(value)
            if isinstance(value, str)
            else public(dict(value) if isinstance(value, dict) else list(value))
        )
    return value
