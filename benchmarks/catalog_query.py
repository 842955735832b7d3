"""Catalog query latency: p50/p95 of `query_offers` on the shipped snapshot (target p95 <= 10 ms) and on a synthetic
1M-offer catalog (target p95 <= 100 ms).

Reproduce:  .venv/bin/python benchmarks/catalog_query.py            (both)
            .venv/bin/python benchmarks/catalog_query.py --rows 200000 --repeat 30

The synthetic catalog is made from the snapshot's offers, each copied with an instance-type suffix and prices scaled by
a seeded random factor (regions kept), written into a temp file with the same schema and indexes as the real database. Latency is
wall time of the whole `query_offers` call (connect, SQL, building `Offer` objects), queries as the agent issues
them (sorted, LIMIT 20).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.catalog import build_db, build_from_snapshot, offer_row, query_offers, read_snapshot  # noqa: E402

QUERIES: list[tuple[str, dict[str, Any]]] = [
    ("min 70 GiB/GPU, by price", {"min_vram_gib": 70, "limit": 20}),
    ("H100 x8, by price", {"gpu": "H100", "gpu_count": 8, "limit": 20}),
    ("A100 any size, by price per GPU", {"gpu": "A100", "sort": "price_per_gpu", "limit": 20}),
    ("spot <= 1 USD/h, by spot price", {"spot_only": True, "max_price": 1.0, "sort": "spot_price", "limit": 20}),
    ("aws us-east-1, >= 24 GiB", {"provider": "aws", "region": "us-east-1", "min_vram_gib": 24, "limit": 20}),
    ("nvlink, >= 4 GPUs, by price per GPU", {"interconnect": "nvlink", "min_gpu_count": 4,
                                             "sort": "price_per_gpu", "limit": 20}),
    ("L4 <= 1 USD/h, all rows", {"gpu": "L4", "max_price": 1.0, "gpu_count": 1, "limit": 200}),
    ("biggest VRAM first", {"sort": "vram", "limit": 20}),
    (">= 150 GiB/GPU spot, by spot price", {"min_vram_gib": 150, "spot_only": True, "sort": "spot_price",
                                            "limit": 20}),
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


def synthetic(rows: int, path: Path, seed: int = 7) -> Path:
    _, offers = read_snapshot()
    base = [offer_row(o) for o in offers]
    rng = random.Random(seed)

    def generate():
        for i in range(rows):
            row = dict(base[i % len(base)])
            factor = rng.uniform(0.7, 1.3)
            for key in ("price_per_hour", "spot_price_per_hour"):
                if row[key] is not None:
                    row[key] = round(row[key] * factor, 4)
            for key in ("price_key", "spot_key", "ppg_key", "sppg_key"):
                if row[key] < 1e17:
                    row[key] = row[key] * factor
            row["instance_type"] = f"{row['instance_type']}-{i // len(base)}"
            yield row

    return build_db(path, generate(), {"source": f"synthetic {rows} offers", "snapshot_date": "synthetic"},
                    trusted_rows=True)


def report(title: str, results, target_ms: float) -> bool:
    print(f"\n{title}")
    print(f"  {'query':40} {'p50 ms':>8} {'p95 ms':>8} {'rows':>6}")
    for label, p50, p95, rows in results:
        print(f"  {label:40} {p50:8.2f} {p95:8.2f} {rows:6d}")
    worst = max(p95 for _, _, p95, _ in results)
    ok = worst <= target_ms
    print(f"  worst p95 {worst:.2f} ms (target <= {target_ms:g} ms): {'OK' if ok else 'MISSED'}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="synthetic catalog size (0 = skip)")
    parser.add_argument("--repeat", type=int, default=100, help="runs per query")
    args = parser.parse_args()
    print("reproduce: .venv/bin/python benchmarks/catalog_query.py"
          + (f" --rows {args.rows}" if args.rows != 1_000_000 else "")
          + (f" --repeat {args.repeat}" if args.repeat != 100 else ""))
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        snapshot_db = build_from_snapshot(Path(tmp) / "snapshot.sqlite")
        ok &= report("shipped snapshot", measure(snapshot_db, args.repeat), 10)
        if args.rows:
            start = time.perf_counter()
            big = synthetic(args.rows, Path(tmp) / "synthetic.sqlite")
            print(f"\nbuilt {args.rows:,} synthetic offers in {time.perf_counter() - start:.1f} s "
                  f"({big.stat().st_size / 1e6:.0f} MB)")
            ok &= report(f"synthetic {args.rows:,} offers", measure(big, max(10, args.repeat // 2)), 100)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
