"""What a hanging LLM costs a turn, beside the offline turn measured in the same run (the figures that
tests/test_agent_llm_deadline.py used to bound; the test now checks the behaviour behind them).

Against the local OpenAI-wire stand-in (tests/fake_openai.py) answering after 30 s, with a 1 s LLM deadline:
one turn, and 24 concurrent turns, each offline first (the baseline) and then with the hanging LLM.

Run: .venv/bin/python benchmarks/llm_deadline.py [--deadline 1.0] [--turns 24]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from agent.llm import client as llm
from agent.service import Advisor
from tests.fake_openai import running

MESSAGE = "QLoRA su Llama 3.1 8B, 20M token, budget 50 euro"


def timed(advisor: Advisor, turns: int, prefix: str) -> tuple[float, float]:
    """(wall seconds, slowest turn seconds) of `turns` concurrent turns on fresh threads."""

    def turn(i: int) -> float:
        began = time.perf_counter()
        advisor.respond(MESSAGE, thread_id=f"{prefix}-{i}")
        return time.perf_counter() - began

    with ThreadPoolExecutor(turns) as pool:
        start = time.perf_counter()
        slowest = max(pool.map(turn, range(turns)))
        return time.perf_counter() - start, slowest


def main(argv: list[str] | None = None) -> int:
    """Print offline and hanging-LLM wall times, their difference against the deadline, and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--deadline", type=float, default=1.0, help="GPU_ADVISOR_LLM_TIMEOUT_S")
    parser.add_argument("--turns", type=int, default=24, help="concurrent turns")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as home, running() as server:
        advisor = Advisor(checkpoint_path=Path(home) / "t.sqlite", db_path=Path(home) / "catalog.sqlite")
        advisor.respond(MESSAGE)  # warm-up (catalog built, caches filled), offline: no LLM configured yet
        rows = []
        for turns in (1, args.turns):
            os.environ["GPU_ADVISOR_OFFLINE"] = "1"
            offline = timed(advisor, turns, f"offline{turns}")
            del os.environ["GPU_ADVISOR_OFFLINE"]
            os.environ.update(
                {
                    "OPENAI_BASE_URL": server.base_url,
                    "OPENAI_API_KEY": "bench",
                    "GPU_ADVISOR_MODEL": "bench",
                    "GPU_ADVISOR_LLM_TIMEOUT_S": str(args.deadline),
                }
            )
            server.default = (200, "never mind", 30.0, 0.0)
            if turns == 1:  # warm-up of the LLM path (the openai package is imported on first use)
                advisor.respond(MESSAGE, thread_id="warm-llm")
            llm.breaker.reset()
            hanging = timed(advisor, turns, f"llm{turns}")
            rows.append((turns, offline, hanging))
        advisor.close()
    print(f"{'turns':>5} {'offline s':>10} {'hanging s':>10} {'slowest s':>10} {'extra s':>8} {'ratio':>6}")
    for turns, (off_wall, _), (llm_wall, llm_slowest) in rows:
        print(
            f"{turns:5d} {off_wall:10.2f} {llm_wall:10.2f} {llm_slowest:10.2f} {llm_wall - off_wall:8.2f} "
            f"{llm_wall / off_wall:6.2f}"
        )
    print(f"extra = hanging - offline wall time; one deadline is {args.deadline:g} s (a turn should cost one, not two)")
    print(f"reproduce: python benchmarks/llm_deadline.py --deadline {args.deadline:g} --turns {args.turns}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
