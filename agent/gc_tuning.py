"""Garbage-collector settings for a long-running advisor: short pauses instead of ~160 ms full collections.

A warm advisor holds a large, long-lived heap (graph, pydantic schemas, lexicons, the knowledge base, catalog
candidates, ranking caches) that every full collection walks again although none of it is garbage. Once that heap
is built (after the advisor starts, and again after its first turns have filled the caches), it is collected once
and moved to the permanent generation with `gc.freeze()`, so later collections only walk what turns allocate. The
first generation's threshold is raised so that a turn's short-lived objects are collected in fewer, still short,
passes. Re-frozen every `REFREEZE_TURNS` turns, so caches that keep growing are not walked again and again.
"""

from __future__ import annotations

import gc
import threading

WARM_TURNS = 3
"""Turns after which the caches are warm and the heap is frozen again."""
REFREEZE_TURNS = 500
"""Freeze what survived every so many turns (long-lived cache entries)."""
GEN0_THRESHOLD = 20_000
"""Allocations between young collections (CPython's default 700 collects ~30 times per turn)."""

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
        due = _turns == WARM_TURNS or _turns % REFREEZE_TURNS == 0
    if due:
        freeze_heap()
