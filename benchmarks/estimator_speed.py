"""Time one VRAM estimate and one fit search (largest micro-batch and sequence, ranked fixes).

Run: python benchmarks/estimator_speed.py
"""

from __future__ import annotations

import statistics
import time

from tools.memory.estimator import EstimateRequest, estimate

CASES = {
    "estimate (llama-3.1-8b qlora)": EstimateRequest(model="llama-3.1-8b", method="qlora"),
    "estimate (llama-3.1-70b full, 64x zero3)": EstimateRequest(model="llama-3.1-70b", num_gpus=64, sharding="zero3"),
    "fit search, fits (llama-3.1-8b lora on A100-80GB)": EstimateRequest(
        model="llama-3.1-8b", method="lora", gradient_checkpointing=True, gpu="A100-80GB"
    ),
    "fit search + fixes (llama-3.1-70b full on H100)": EstimateRequest(
        model="llama-3.1-70b", gpu="H100", micro_batch_size=4, seq_len=4096
    ),
}


def time_case(request: EstimateRequest, repeats: int) -> tuple[float, float]:
    """Median and p95 wall time of `estimate(request)` in milliseconds."""
    estimate(request)
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        estimate(request)
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(0.95 * (len(samples) - 1))]


def main() -> None:
    """Print the figures and how to reproduce them."""
    print(f"{'case':52} {'median ms':>10} {'p95 ms':>8}")
    for name, request in CASES.items():
        median, p95 = time_case(request, repeats=200)
        print(f"{name:52} {median:10.3f} {p95:8.3f}")
    print("\nreproduce: .venv/bin/python benchmarks/estimator_speed.py")


if __name__ == "__main__":
    main()
