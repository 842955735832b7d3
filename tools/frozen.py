"""Frozen dataclasses that key caches: their hash computed once per instance instead of on every lookup."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from operator import attrgetter
from typing import Any

_KEY = "_hash_once"
_GETTERS: dict[type, Callable[[Any], tuple[Any, ...]]] = {}


def field_values(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    """A function returning an instance's field values as a tuple, in field order (one per dataclass, kept)."""
    found = _GETTERS.get(cls)
    if found is None:
        names = tuple(item.name for item in fields(cls))
        if len(names) == 1:
            one = attrgetter(names[0])
            found = _GETTERS[cls] = lambda instance: (one(instance),)
        else:
            found = _GETTERS[cls] = attrgetter(*names)
    return found


class HashSlot:
    """A base that gives a slotted frozen dataclass a slot for its hash: `keep_hash` fills it at creation (its
    __post_init__), and its __hash__ returns `self._hash_once`."""

    __slots__ = (_KEY,)

    def keep_hash(self) -> None:
        """Compute the fields' hash (what the generated __hash__ returns) once, now."""
        object.__setattr__(self, _KEY, hash(field_values(type(self))(self)))


def hash_once(instance: Any) -> int:
    """hash() of a frozen dataclass's field values (what the generated __hash__ returns), kept in the instance's
    __dict__ after the first call (its fields never change)."""
    found = instance.__dict__.get(_KEY)
    if found is None:
        found = instance.__dict__[_KEY] = hash(field_values(type(instance))(instance))
    return found  # type: ignore[no-any-return]
