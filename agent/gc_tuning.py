"""Garbage-collector settings for a long-running advisor: short pauses instead of ~160 ms full collections.

Process-wide, so applied only by the entry points that run many turns (`for_long_running`).

A warm advisor holds a large, long-lived heap (graph, pydantic schemas, lexicons, the knowledge base, catalog
candidates, ranking caches) that every full collection walks again although none of it is garbage. Once that heap
is built (after the advisor starts, and again after its first turns have filled the caches), it is collected once
and moved to the permanent generation with `gc.freeze()`, so later collections only walk what turns allocate. Every
`REFREEZE_TURNS` turn(s) what survived is frozen too, after a young-generation collection (short: it only walks
recent objects), so caches that grow with new jobs never make the young or full collections long. Objects that
outlive two young collections and later become cyclic garbage would stay frozen: per-turn cycles die young, and
evicted cache entries are freed by reference counting.
"""

from __future__ import annotations

import gc
import threading
from typing import Any

WARM_TURNS = 3
"""Turns after which the caches are warm and the heap is collected and frozen again."""
REFREEZE_TURNS = 1
"""Freeze what survived every so many turns (long-lived cache entries), after a young collection. Every turn: a
never-seen job leaves thousands of cache objects, and 25 turns of them made one collection walk ~100 ms; one turn's
survivors take under 10 ms, and the collector's CPU per turn halves (benchmarks/turn_memory.py, issue 27)."""
GEN0_THRESHOLD = 10_000
"""Net allocations between young collections (CPython's default is 700). A turn's temporaries die by reference
counting long before 10,000 pile up, so young collections become rare (600 turns: 566 -> 25 collections, the
longest 6-7 ms) and a new-job turn ~12 % faster (benchmarks/turn_overhead.py; issue 14)."""

_lock = threading.Lock()
_turns = 0
_started = False


def freeze_heap() -> None:
    """Collect once, then move every surviving object out of the collector's way (permanent generation)."""
    gc.collect()
    gc.freeze()


def tune() -> None:
    """Raise the young-generation threshold (older generations keep CPython's defaults)."""
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(max(GEN0_THRESHOLD, gc.get_threshold()[0]), older, oldest)


def after_start() -> None:
    """Call once an advisor is constructed: tune the thresholds and freeze the heap built so far (once per process;
    without a collection, so that a one-shot command pays nothing for it)."""
    global _started
    with _lock:
        if _started:
            return
        _started = True
    tune()
    gc.freeze()


def after_turn() -> None:
    """Call after each turn: freeze again once the caches are warm, then every REFREEZE_TURNS turns."""
    global _turns
    with _lock:
        _turns += 1
        warm = _turns == WARM_TURNS
        due = _turns % REFREEZE_TURNS == 0
    if warm:
        freeze_heap()
    elif due:
        gc.collect(1)
        gc.freeze()


def for_long_running(advisor: Any) -> Any:
    """Tune the collector for a process that answers many turns with `advisor` (chat, serve, the Slack bot): called
    by those entry points, never by the library itself, since the settings are process-wide."""
    advisor.on_turn = after_turn
    after_start()
    return advisor
