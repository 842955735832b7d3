"""Word lists the offline language detector and parser read: one JSON data file per language and purpose.

Code loads them with `agent.lexicon.load(name)`; editing a list never needs a code change.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import prompts


@cache
def load(name: str) -> Any:
    """Return the parsed JSON data file `name` (e.g. 'intent.json'; one language's lists: language_words) shipped in this package."""
    return json.loads(resources.files(__package__).joinpath(name).read_text(encoding="utf-8"))


@cache
def language_words(language: str, name: str) -> Any:
    """Return the word list `name` of one language (prompts/<language>/words/<name>.json)."""
    return json.loads(prompts.load_in(language, f"words/{name}.json"))
