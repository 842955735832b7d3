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
    """A base that gives a slotted frozen dataclass the slot `hash_once` keeps its hash in."""

    __slots__ = (_KEY,)


def hash_once(instance: Any) -> int:
    """hash() of a frozen dataclass's field values (what the generated __hash__ returns), kept on the instance after
    the first call (its fields never change): in its __dict__, or in the slot of a `HashSlot` subclass."""
    try:
        return getattr(instance, _KEY)  # type: ignore[no-any-return]
    except AttributeError:
        found = hash(field_values(type(instance))(instance))
        object.__setattr__(instance, _KEY, found)
        return found
