"""Offline agent turn latency in process (p50/p95, warm) and CLI cold start.

Run: .venv/bin/python benchmarks/turn_latency.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agent.gc_tuning import for_long_running  # what serve and chat do: a long-running advisor
from agent.service import Advisor

TURNS = [
    "QLoRA su Llama 3 70B, budget 300 euro, vanno bene le spot?",
    "e con 4 GPU?",
    "LoRA pada Mistral 7B, 10 ribu contoh, anggaran 2 juta rupiah",
    "kalau pakai QLoRA?",
    "Full fine-tune Llama 3.1 8B on 100M tokens within 24 hours, no spot",
    "and with 8 GPUs?",
    "can I use spot instances for fine-tuning?",
    "pretraining GPT-2 small from scratch on 10B tokens, budget $200",
]


def main() -> None:
    """Print per-turn latency figures and the CLI's cold start."""
    home = Path(tempfile.mkdtemp(prefix="gpu-advisor-bench-"))
    advisor = for_long_running(Advisor(checkpoint_path=home / "threads.sqlite", db_path=home / "catalog.sqlite"))
    advisor.respond(TURNS[0])  # first use builds caches (catalog rows, KB indexes)
    samples = []
    for _round in range(5):
        thread = None
        for text in TURNS:
            start = time.perf_counter()
            thread = advisor.respond(text, thread_id=thread)["thread_id"]
            samples.append((time.perf_counter() - start) * 1000)
    advisor.close()
    samples.sort()
    print(
        f"offline turn, in process, warm: p50 {statistics.median(samples):.1f} ms, "
        f"p95 {samples[int(0.95 * (len(samples) - 1))]:.1f} ms, max {samples[-1]:.1f} ms ({len(samples)} turns)"
    )
    env = dict(os.environ, GPU_ADVISOR_HOME=str(home))
    script = Path(sys.executable).parent / "gpu-advisor"
    for label, args in (
        ("gpu-advisor --help", ["--help"]),
        ("gpu-advisor recommend (one turn, cold)", ["recommend", "--json", TURNS[0]]),
    ):
        times = []
        for _ in range(3):
            start = time.perf_counter()
            subprocess.run([str(script), *args], env=env, capture_output=True, check=True)
            times.append(time.perf_counter() - start)
        print(f"{label:40} median {statistics.median(times) * 1000:.0f} ms")
    print("reproduce: .venv/bin/python benchmarks/turn_latency.py")


if __name__ == "__main__":
    main()
