"""Word lists the offline language detector and parser read: one JSON data file per language and purpose.

Code loads them with `agent.lexicon.load(name)`; editing a list never needs a code change.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


@cache
def load(name: str) -> Any:
    """Return the parsed JSON data file `name` (e.g. 'language_it.json') shipped in this package."""
    return json.loads(resources.files(__package__).joinpath(name).read_text(encoding="utf-8"))
