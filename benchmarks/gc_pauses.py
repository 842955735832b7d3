"""Garbage-collector pauses of a warm advisor, tuned (agent/gc_tuning.py) beside an untuned baseline, in one run.

Each side runs in a fresh interpreter (the collector's settings are global): the same conversation of new jobs and
follow-ups, every collection timed by a gc callback. The baseline is a plain Advisor (no for_long_running), so it runs
CPython's default thresholds and no frozen heap. Printed per side: collections by generation, the longest pause,
p99 and total pause time, and the tuned/baseline ratios.

Run: .venv/bin/python benchmarks/gc_pauses.py [--turns 200]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIDE = """
import gc, json, sys, time
from pathlib import Path
from agent.gc_tuning import for_long_running
from agent.service import Advisor
home, turns = Path(sys.argv[1]), int(sys.argv[3])
advisor = Advisor(checkpoint_path=home / "threads.sqlite", db_path=home / "catalog.sqlite")
if sys.argv[2] != "baseline":  # the baseline is a plain library Advisor: CPython's collector settings
    advisor = for_long_running(advisor)
jobs = ["LoRA on Llama 3.2 1B with {n}k examples", "QLoRA su Qwen2.5 14B, budget {n} euro",
        "Full fine-tune Llama 3.1 8B on {n}M tokens within 24 hours, no spot"]
follow = ["and with 2 GPUs?", "cheaper?", "e con 4 GPU?", "yang lebih cepat?"]
for n in range(3):  # warm-up: the caches fill, the tuned side freezes its heap
    advisor.respond(jobs[n].format(n=10 + n))
pauses = []
def hook(phase, info, clock=[0.0]):
    if phase == "start":
        clock[0] = time.perf_counter()
    else:
        pauses.append((info["generation"], (time.perf_counter() - clock[0]) * 1000))
gc.callbacks.append(hook)
thread = None
for turn in range(turns):
    if turn % 5 == 0:
        thread = advisor.respond(jobs[turn % 3].format(n=20 + turn))["thread_id"]
    else:
        advisor.respond(follow[turn % 4], thread_id=thread)
gc.callbacks.remove(hook)
advisor.close()
print(json.dumps(pauses))
"""


def run_side(side: str, turns: int) -> list[tuple[int, float]]:
    """(generation, pause ms) of every collection during `turns` warm turns on one side."""
    with tempfile.TemporaryDirectory() as home:
        out = subprocess.run(
            [sys.executable, "-c", SIDE, home, side, str(turns)], capture_output=True, text=True, cwd=ROOT, check=True
        )
    return [tuple(item) for item in json.loads(out.stdout.strip().splitlines()[-1])]


def summary(pauses: list[tuple[int, float]]) -> dict[str, float]:
    """Counts by generation, longest, p99 and total pause in ms."""
    times = sorted(ms for _, ms in pauses) or [0.0]
    return {
        "gen0": sum(g == 0 for g, _ in pauses),
        "gen1": sum(g == 1 for g, _ in pauses),
        "gen2": sum(g == 2 for g, _ in pauses),
        "max_ms": times[-1],
        "p99_ms": times[min(len(times) - 1, int(0.99 * len(times)))],
        "total_ms": sum(times),
    }


def main(argv: list[str] | None = None) -> int:
    """Measure both sides and print the figures and ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=200, help="warm turns per side")
    args = parser.parse_args(argv)
    sides = {side: summary(run_side(side, args.turns)) for side in ("baseline", "tuned")}
    print(f"{'side':9} {'gen0':>5} {'gen1':>5} {'gen2':>5} {'max ms':>8} {'p99 ms':>8} {'total ms':>9}")
    for side, f in sides.items():
        print(
            f"{side:9} {f['gen0']:5d} {f['gen1']:5d} {f['gen2']:5d} {f['max_ms']:8.2f} {f['p99_ms']:8.2f} "
            f"{f['total_ms']:9.1f}"
        )
    base, tuned = sides["baseline"], sides["tuned"]
    for key in ("max_ms", "total_ms"):
        ratio = tuned[key] / base[key] if base[key] else float("nan")
        print(f"tuned/baseline {key}: {ratio:.3f}")
    print(f"{args.turns} warm turns per side, each side in a fresh interpreter")
    print(f"reproduce: python benchmarks/gc_pauses.py --turns {args.turns}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
