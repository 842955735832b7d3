"""Memory estimates memoised by request: a chat re-estimates the same layouts turn after turn (every follow-up on
a thread, every user asking about the same job), and one estimate with its fit search costs milliseconds.

`cached_estimate(request)` is `tools.memory.estimator.estimate(request)` computed once per distinct request (its JSON) and
returned as a copy, so a caller may change what it gets. A request naming a config file is never cached (the file
may change); errors are never cached.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from tools.memory.estimator import Estimate, EstimateRequest, estimate

MAX_ENTRIES = 512
"""Distinct requests kept (least recently used dropped first)."""

_cache: OrderedDict[str, Estimate] = OrderedDict()
_lock = threading.Lock()


def cached_estimate(request: EstimateRequest) -> Estimate:
    """estimate(request), from memory when the same request was estimated before (a deep copy either way)."""
    if getattr(request, "config_path", None):
        return estimate(request)
    key = request.model_dump_json()
    with _lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
    if found is None:
        found = estimate(request)
        with _lock:
            _cache[key] = found
            while len(_cache) > MAX_ENTRIES:
                _cache.popitem(last=False)
    return found.model_copy(deep=True)


def clear() -> None:
    """Forget every cached estimate."""
    with _lock:
        _cache.clear()
