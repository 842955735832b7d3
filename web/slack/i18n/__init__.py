"""Slack interface strings in it/id/en, one JSON file per language (prompts/<code>/slack.json), with a formatter.

Every key exists in every language (a test checks it); code never embeds user-facing text.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import prompts


@cache
def strings(language: str) -> dict[str, Any]:
    """All strings of one language (English for anything unsupported)."""
    return json.loads(prompts.load_in(language, "slack.json"))


def text(key: str, language: str, **params: Any) -> str:
    """The string `key` in `language`, with `{name}` placeholders filled from `params`."""
    template = strings(language)[key]
    return template.format(**params) if params else template


def label(group: str, key: str, language: str) -> str:
    """An entry of a nested table (e.g. group 'methods', key 'qlora'), or the key itself when unknown."""
    return str(strings(language).get(group, {}).get(key, key))
