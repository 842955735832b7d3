"""Resident memory and garbage-collector pauses of one warm advisor over many never-seen jobs (issue 27).

Every new job has a sequence length never asked before (benchmarks/turn_overhead.py --never-seen), each followed
by one follow-up on its thread, so every per-job cache keeps filling. Printed: RSS (current, /proc/self/statm)
after warm-up and at checkpoints, the ratio of the last checkpoint to the first one after warm-up (goal: flat,
<= 1.2x), and the longest collection per generation (wall and CPU ms).

Run: .venv/bin/python benchmarks/turn_memory.py [--turns 1200] [--every 300]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from turn_overhead import FOLLOW_UPS, NEW_JOBS, GcPauses, new_job

from agent.gc_tuning import for_long_running
from agent.service import Advisor


def rss_mb() -> float:
    """Current resident set size in MB (Linux)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def main() -> None:
    """Run the turns and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1200, help="turns in all (half new jobs, half follow-ups)")
    parser.add_argument("--every", type=int, default=300, help="print RSS every so many turns")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="gpu-advisor-memory-"))
    advisor = for_long_running(Advisor(checkpoint_path=home / "threads.sqlite", db_path=home / "catalog.sqlite"))
    for text in NEW_JOBS:
        advisor.respond(text)
    print(f"after warm-up: RSS {rss_mb():.0f} MB")
    pauses = GcPauses()
    gc.callbacks.append(pauses)
    marks: list[tuple[int, float]] = []
    try:
        for index in range(args.turns // 2):
            thread = advisor.respond(new_job(index, "never-seen"))["thread_id"]
            advisor.respond(FOLLOW_UPS[index % len(FOLLOW_UPS)], thread_id=thread)
            if (2 * index + 2) % args.every == 0:
                marks.append((2 * index + 2, rss_mb()))
                print(f"after {marks[-1][0]:5d} turns: RSS {marks[-1][1]:.0f} MB", flush=True)
    finally:
        gc.callbacks.remove(pauses)
        advisor.close()
    if len(marks) >= 2:
        print(f"RSS at {marks[-1][0]} turns / at {marks[0][0]} turns: {marks[-1][1] / marks[0][1]:.2f}x (goal <= 1.2x)")
        middle = marks[(len(marks) - 1) // 2]
        print(f"RSS at {marks[-1][0]} turns / at {middle[0]} turns: {marks[-1][1] / middle[1]:.2f}x (second half)")
    for generation in (0, 1, 2):
        walls = [ms for (gen, ms) in pauses.pauses if gen == generation]
        cpus = [cpu for (gen, _), cpu in zip(pauses.pauses, pauses.cpu) if gen == generation]
        print(
            f"gen-{generation} collections {len(walls):4d}, longest {max(walls, default=0):6.1f} ms wall "
            f"{max(cpus, default=0):6.1f} ms CPU, over 20 ms CPU: {sum(1 for c in cpus if c > 20)}"
        )
    print(
        f"garbage collector CPU in all: {sum(pauses.cpu):.0f} ms over {args.turns} turns "
        f"({sum(pauses.cpu) / max(args.turns, 1):.2f} ms per turn)"
    )
    print(f"reproduce: .venv/bin/python benchmarks/turn_memory.py --turns {args.turns} --every {args.every}")


if __name__ == "__main__":
    main()
