"""Frozen dataclasses that key caches: their hash computed once per instance instead of on every lookup."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

_KEY = "_hash_once"


def hash_once(instance: Any) -> int:
    """hash() of a frozen dataclass's field values (what the generated __hash__ returns), kept on the instance after
    the first call (its fields never change)."""
    found = instance.__dict__.get(_KEY)
    if found is None:
        found = instance.__dict__[_KEY] = hash(tuple(getattr(instance, item.name) for item in fields(instance)))
    return found  # type: ignore[no-any-return]
