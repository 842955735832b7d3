"""Catalog query latency: p50/p95 of `query_offers` (catalog CLI, /api/tools/offers, MCP) and of the chat ranking's
candidate query (`tools.catalog.candidates.candidate_rows`, run once per catalog version and wishes, then cached) on
the shipped snapshot (target p95 <= 10 ms) and on a synthetic 1M-offer catalog (target p95 <= 100 ms for
query_offers; the candidate query is reported, with its row-count-independent result size).

Reproduce:  .venv/bin/python benchmarks/catalog_query.py            (both)
            .venv/bin/python benchmarks/catalog_query.py --rows 200000 --repeat 30

The synthetic catalog is benchmarks/catalog_scale.py's: the snapshot's offers copied into new regions/zones with
prices scaled by a seeded random factor (same instance shapes at every size), in a temp file with the real schema and
indexes. Latency is wall time of the whole call (connect, SQL, building `Offer` objects); query_offers as its callers
issue it (sorted, LIMIT 20); candidate_rows as a turn's ranking issues it on a cache miss (no wishes, a GPU, a region,
two providers).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalog_scale import synthesise

from tools.catalog.candidates import candidate_rows
from tools.catalog.query import build_from_snapshot, query_offers

QUERIES: list[tuple[str, dict[str, Any]]] = [
    ("min 70 GiB/GPU, by price", {"min_vram_gib": 70, "limit": 20}),
    ("H100 x8, by price", {"gpu": "H100", "gpu_count": 8, "limit": 20}),
    ("A100 any size, by price per GPU", {"gpu": "A100", "sort": "price_per_gpu", "limit": 20}),
    ("spot <= 1 USD/h, by spot price", {"spot_only": True, "max_price": 1.0, "sort": "spot_price", "limit": 20}),
    ("aws us-east-1, >= 24 GiB", {"provider": "aws", "region": "us-east-1", "min_vram_gib": 24, "limit": 20}),
    (
        "nvlink, >= 4 GPUs, by price per GPU",
        {"interconnect": "nvlink", "min_gpu_count": 4, "sort": "price_per_gpu", "limit": 20},
    ),
    ("L4 <= 1 USD/h, all rows", {"gpu": "L4", "max_price": 1.0, "gpu_count": 1, "limit": 200}),
    ("biggest VRAM first", {"sort": "vram", "limit": 20}),
    (">= 150 GiB/GPU spot, by spot price", {"min_vram_gib": 150, "spot_only": True, "sort": "spot_price", "limit": 20}),
    ("runpod or vast, by price per GPU", {"providers": ["runpod", "vast"], "sort": "price_per_gpu", "limit": 20}),
    ("8+ GPUs <= 30 USD/h, >= 40 GiB", {"min_gpu_count": 8, "max_price": 30, "min_vram_gib": 40, "limit": 20}),
]


def measure(db: Path, repeat: int) -> list[tuple[str, float, float, int]]:
    results = []
    for label, kwargs in QUERIES:
        query_offers(db, **kwargs)  # warm the page cache
        times = []
        rows = 0
        for _ in range(repeat):
            start = time.perf_counter()
            rows = len(query_offers(db, **kwargs))
            times.append((time.perf_counter() - start) * 1000)
        times.sort()
        p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
        results.append((label, statistics.median(times), p95, rows))
    return results


CANDIDATE_WISHES: list[tuple[str, dict[str, Any]]] = [
    ("candidates, no wishes", {}),
    ("candidates, GPU H100", {"gpu": "H100"}),
    ("candidates, region us-east-1", {"regions": ("us-east-1",)}),
    ("candidates, providers aws+vast", {"providers": ("aws", "vast")}),
]


def measure_candidates(db: Path, repeat: int) -> list[tuple[str, float, float, int]]:
    """The ranking's candidate query, uncached (what a turn pays once per catalog version and wishes)."""
    results = []
    for label, wishes in CANDIDATE_WISHES:
        times = []
        rows = 0
        for _ in range(repeat):
            start = time.perf_counter()
            rows = len(candidate_rows(db, **wishes))
            times.append((time.perf_counter() - start) * 1000)
        times.sort()
        p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
        results.append((label, statistics.median(times), p95, rows))
    return results


def report(title: str, results, target_ms: float) -> bool:
    print(f"\n{title}")
    print(f"  {'query':40} {'p50 ms':>8} {'p95 ms':>8} {'rows':>6}")
    for label, p50, p95, rows in results:
        print(f"  {label:40} {p50:8.2f} {p95:8.2f} {rows:6d}")
    worst = max(p95 for _, _, p95, _ in results)
    ok = worst <= target_ms
    if target_ms == float("inf"):
        print(f"  worst p95 {worst:.2f} ms (reported, no target)")
    else:
        print(f"  worst p95 {worst:.2f} ms (target <= {target_ms:g} ms): {'OK' if ok else 'MISSED'}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="synthetic catalog size (0 = skip)")
    parser.add_argument("--repeat", type=int, default=100, help="runs per query")
    args = parser.parse_args()
    print(
        "reproduce: .venv/bin/python benchmarks/catalog_query.py"
        + (f" --rows {args.rows}" if args.rows != 1_000_000 else "")
        + (f" --repeat {args.repeat}" if args.repeat != 100 else "")
    )
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        snapshot_db = build_from_snapshot(Path(tmp) / "snapshot.sqlite")
        ok &= report("shipped snapshot", measure(snapshot_db, args.repeat), 10)
        report(
            "shipped snapshot: ranking candidates (cold, once per catalog version and wishes)",
            measure_candidates(snapshot_db, max(3, args.repeat // 10)),
            float("inf"),
        )
        if args.rows:
            start = time.perf_counter()
            big = synthesise(args.rows, Path(tmp) / "synthetic.sqlite")
            print(
                f"\nbuilt {args.rows:,} synthetic offers in {time.perf_counter() - start:.1f} s "
                f"({big.stat().st_size / 1e6:.0f} MB)"
            )
            ok &= report(f"synthetic {args.rows:,} offers", measure(big, max(10, args.repeat // 2)), 100)
            report(
                f"synthetic {args.rows:,} offers: ranking candidates (cold)", measure_candidates(big, 3), float("inf")
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
