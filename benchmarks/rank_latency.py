"""Latency of rank_offers on the shipped offers snapshot: first call (cold caches) and repeated calls (warm).

Reproduce: .venv/bin/python benchmarks/rank_latency.py
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from contract.jobspec import Budget, JobSpec
from tools.catalog.query import build_from_snapshot
from tools.ranking.rank import clear_cache, rank_offers

SPECS = [
    JobSpec(
        language="en",
        model="llama-3.1-8b",
        method="qlora",
        dataset_tokens=20_000_000,
        epochs=2,
        budget=Budget(amount=50, currency="EUR"),
        deadline_hours=24,
    ),
    JobSpec(language="it", model="llama-3.1-8b", method="full_finetune", interruptible_ok=True),
    JobSpec(language="id", params_b=70, method="lora", budget=Budget(amount=2_000_000, currency="IDR")),
    JobSpec(language="en", model="llama-3.1-70b", method="full_finetune", num_gpus=16),
]


def main(repeats: int = 20) -> None:
    """Print cold and warm p50/p95 per spec in milliseconds."""
    with tempfile.TemporaryDirectory() as folder:
        db = build_from_snapshot(Path(folder) / "catalog.sqlite")
        for spec in SPECS:
            clear_cache()
            start = time.perf_counter()
            result = rank_offers(spec, db_path=db)
            cold = (time.perf_counter() - start) * 1e3
            warm = []
            for _ in range(repeats):
                start = time.perf_counter()
                rank_offers(spec, db_path=db)
                warm.append((time.perf_counter() - start) * 1e3)
            warm.sort()
            p95 = warm[int(0.95 * (len(warm) - 1))]
            print(
                f"{spec.model or spec.params_b} {spec.method}: considered {result.considered}, eligible "
                f"{result.total_eligible}; cold {cold:.0f} ms, warm p50 {statistics.median(warm):.1f} ms, "
                f"p95 {p95:.1f} ms"
            )


if __name__ == "__main__":
    main()
