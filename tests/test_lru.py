"""The shared memo (tools.lru.Lru): least recently used out first, never more than its size, safe across threads."""

from __future__ import annotations

import threading

import pytest

from tools.lru import Lru


def test_the_least_recently_used_entry_leaves_first() -> None:
    """Reading an entry keeps it; the oldest unread one is dropped when a new one comes."""
    memo: Lru[str, int] = Lru(2)
    memo.put("a", 1)
    memo.put("b", 2)
    assert memo.get("a") == 1
    memo.put("c", 3)
    assert "b" not in memo and memo.get("a") == 1 and memo.get("c") == 3
    assert len(memo) == 2


def test_absent_entries_and_kept_falsy_values() -> None:
    """A kept 0 or None is told apart from an absent key through the default."""
    memo: Lru[str, int | None] = Lru(4)
    missing = object()
    memo.put("zero", 0)
    memo.put("none", None)
    assert memo.get("zero") == 0
    assert memo.get("none", missing) is None
    assert memo.get("other", missing) is missing
    assert memo.get_or_make("zero", lambda: 5) == 0
    assert memo.pop("zero") == 0 and "zero" not in memo
    memo.clear()
    assert len(memo) == 0


def test_a_size_below_one_is_refused() -> None:
    """An LRU of no entries would drop what it was just given."""
    with pytest.raises(ValueError):
        Lru(0)


def test_many_threads_never_grow_it_past_its_size() -> None:
    """Eight threads putting and reading 2,000 keys each leave at most `size` entries, each the value put."""
    memo: Lru[int, int] = Lru(50)
    wrong: list[int] = []

    def work(start: int) -> None:
        for key in range(start, start + 2000):
            memo.put(key, key * 2)
            found = memo.get(key - 3)
            if found is not None and found != (key - 3) * 2:
                wrong.append(key)

    threads = [threading.Thread(target=work, args=(n * 10_000,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not wrong
    assert len(memo) == 50
    assert all(memo.get(key) in (None, key * 2) for key in range(80_000))
