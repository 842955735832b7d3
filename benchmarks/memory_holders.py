"""What holds memory as turns accumulate in one warm advisor (issue 27): tracemalloc growth between two points.

Runs the turns of benchmarks/turn_memory.py; from --start turns on, tracemalloc traces every allocation (so the
snapshot at --turns holds only what was allocated after --start and is still alive), then prints the top growth by
traceback, the object types whose counts grew, and the size of every memoising cache (lru_cache wrappers and
module-level dicts) at both points, with a deep size estimate in MB.

Run: .venv/bin/python benchmarks/memory_holders.py [--start 1000] [--turns 3000] [--frames 12] [--top 15]
"""

from __future__ import annotations

import argparse
import collections
import gc
import sys
import tempfile
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from turn_memory import rss_mb
from turn_overhead import FOLLOW_UPS, NEW_JOBS, new_job

from agent.gc_tuning import for_long_running
from agent.service import Advisor

OWN_PREFIXES = ("agent", "tools", "kb", "web", "contract", "cli", "slack")


def deep_mb(root: Any, limit: int = 2_000_000) -> float:
    """An estimate of the memory reachable from `root` (objects counted once; modules, types and functions not
    followed), in MB."""
    seen: set[int] = set()
    stack = [root]
    total = 0
    skip = (type, type(sys), type(deep_mb))
    while stack and len(seen) < limit:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, skip):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj, 0)
        stack.extend(gc.get_referents(obj))
    return total / 1e6


def caches() -> Iterator[tuple[str, int, Any]]:
    """(name, entries, object) for every lru_cache wrapper and module-level dict, list or set of the project."""
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] not in OWN_PREFIXES:
            continue
        for attr, value in list(vars(module).items()):
            if hasattr(value, "cache_info") and getattr(value, "__module__", None) == name:
                yield f"{name}.{attr}()", value.cache_info().currsize, value
            elif isinstance(value, (dict, list, set)) and not attr.startswith("__"):
                yield f"{name}.{attr}", len(value), value


def cache_table() -> dict[str, tuple[int, float]]:
    """Entries and deep MB of every cache."""
    return {name: (size, deep_mb(obj)) for name, size, obj in caches()}


def type_counts() -> collections.Counter[str]:
    """Live objects tracked by the collector, by type name (frozen ones included: gc_tuning freezes every turn)."""
    gc.unfreeze()
    try:
        return collections.Counter(type(obj).__qualname__ for obj in gc.get_objects())
    finally:
        gc.freeze()


def main() -> None:
    """Run the turns and print what grew."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--start", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=3000)
    parser.add_argument("--frames", type=int, default=12)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="gpu-advisor-holders-"))
    advisor = for_long_running(Advisor(checkpoint_path=home / "threads.sqlite", db_path=home / "catalog.sqlite"))
    for text in NEW_JOBS:
        advisor.respond(text)
    before_caches: dict[str, tuple[int, float]] = {}
    before_types: collections.Counter[str] = collections.Counter()
    for index in range(args.turns // 2):
        if 2 * index == args.start:
            gc.collect()
            before_caches, before_types = cache_table(), type_counts()
            print(f"at {args.start} turns: RSS {rss_mb():.0f} MB", flush=True)
            tracemalloc.start(args.frames)
        thread = advisor.respond(new_job(index, "never-seen"))["thread_id"]
        advisor.respond(FOLLOW_UPS[index % len(FOLLOW_UPS)], thread_id=thread)
    gc.collect()
    snapshot = tracemalloc.take_snapshot()
    tracemalloc.stop()
    print(f"at {args.turns} turns: RSS {rss_mb():.0f} MB (tracemalloc on since {args.start})")
    stats = snapshot.statistics("traceback")
    print(f"\nstill alive, allocated after {args.start} turns: {sum(s.size for s in stats) / 1e6:.1f} MB")
    for stat in stats[: args.top]:
        print(f"\n{stat.size / 1e6:8.2f} MB in {stat.count} blocks")
        for line in stat.traceback.format(most_recent_first=True)[: 2 * args.frames]:
            print("   ", line)
    after_types = type_counts()
    print("\nobject types that grew (count at start -> at end):")
    for name, grown in (after_types - before_types).most_common(args.top):
        print(f"  {name:40s} {before_types[name]:8d} -> {after_types[name]:8d} (+{grown})")
    print("\ncaches (entries, deep MB) at start -> at end:")
    after_caches = cache_table()
    for name, (size, mb) in sorted(after_caches.items(), key=lambda item: -item[1][1]):
        old_size, old_mb = before_caches.get(name, (0, 0.0))
        if mb >= 0.05 or size != old_size:
            print(f"  {name:60s} {old_size:7d} {old_mb:7.2f} -> {size:7d} {mb:7.2f}")
    advisor.close()


if __name__ == "__main__":
    main()
