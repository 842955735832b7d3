"""Memory estimates memoised by request: a chat re-estimates the same layouts turn after turn (every follow-up on
a thread, every user asking about the same job), and one estimate with its fit search costs milliseconds.

`cached_estimate(request)` is `tools.memory.estimator.estimate(request)` computed once per distinct request (its JSON) and
returned as a copy, so a caller may change what it gets. A request naming a config file is never cached (the file
may change); errors are never cached.
"""

from __future__ import annotations

from tools.lru import Lru
from tools.memory.estimator import Estimate, EstimateRequest, estimate

MAX_ENTRIES = 512
"""Distinct requests kept (least recently used dropped first)."""

_cache: Lru[str, Estimate] = Lru(MAX_ENTRIES)


def cached_estimate(request: EstimateRequest) -> Estimate:
    """estimate(request), from memory when the same request was estimated before (a deep copy either way)."""
    if getattr(request, "config_path", None):
        return estimate(request)
    return _cache.get_or_make(request.model_dump_json(), lambda: estimate(request)).model_copy(deep=True)


def clear() -> None:
    """Forget every cached estimate."""
    _cache.clear()
