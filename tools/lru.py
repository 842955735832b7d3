"""A bounded, thread-safe memo: the least recently used entry leaves first, never the whole memo at once (the
caches of a long-running advisor: plans, workloads, estimates, rankings, compare pages)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")
D = TypeVar("D")


class Lru(Generic[K, V]):
    """At most `size` entries; `get` marks an entry used, `put` drops the least recently used beyond the size."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("an LRU holds at least one entry")
        self.size = size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K, default: D = None) -> V | D:  # type: ignore[assignment]
        """The entry, marked used; `default` when absent."""
        with self._lock:
            if key not in self._entries:
                return default
            self._entries.move_to_end(key)
            return self._entries[key]

    def put(self, key: K, value: V) -> V:
        """Keep `value` under `key` (the most recently used) and return it."""
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return value

    def get_or_make(self, key: K, make: Callable[[], V]) -> V:
        """The entry, else `make()` kept under `key` (made outside the lock: two threads may both make it)."""
        found = self.get(key)
        return found if found is not None else self.put(key, make())

    def pop(self, key: K) -> V | None:
        """Remove the entry and return it (None when absent)."""
        with self._lock:
            return self._entries.pop(key, None)

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()

    def __contains__(self, key: object) -> bool:
        """Whether `key` is kept (without marking it used)."""
        return key in self._entries

    def __len__(self) -> int:
        """Entries kept."""
        return len(self._entries)
