"""Slack interface strings in it/id/en, one JSON file per language next to this module, with a formatter.

Every key exists in every language (a test checks it); code never embeds user-facing text.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

LANGUAGES: tuple[str, ...] = ("it", "id", "en")


@cache
def strings(language: str) -> dict[str, Any]:
    """All strings of one language (English for anything unsupported)."""
    name = language if language in LANGUAGES else "en"
    return json.loads(resources.files(__package__).joinpath(f"{name}.json").read_text(encoding="utf-8"))


def text(key: str, language: str, **params: Any) -> str:
    """The string `key` in `language`, with `{name}` placeholders filled from `params`."""
    template = strings(language)[key]
    return template.format(**params) if params else template


def label(group: str, key: str, language: str) -> str:
    """An entry of a nested table (e.g. group 'methods', key 'qlora'), or the key itself when unknown."""
    return str(strings(language).get(group, {}).get(key, key))
