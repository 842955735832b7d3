"""A long-running advisor keeps garbage-collector pauses short: its warm heap is frozen and young collections are
rarer (agent/gc_tuning.py, applied by the long-running entry points). Runs in a fresh interpreter: the settings are global."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import gc, json, sys
from pathlib import Path
from agent.gc_tuning import for_long_running
from agent.service import Advisor
home = Path(sys.argv[1])
before = {"frozen": gc.get_freeze_count(), "threshold": gc.get_threshold()[0]}
advisor = for_long_running(Advisor(checkpoint_path=home / "threads.sqlite", db_path=home / "catalog.sqlite"))
started = gc.get_freeze_count()
generations = []
def hook(phase, info):
    if phase == "start":
        generations.append(info["generation"])
thread = advisor.respond("LoRA on Llama 3.2 1B with 5k examples")["thread_id"]
for text in ("and with 2 GPUs?", "cheaper?", "QLoRA su Qwen2.5 14B, budget 50 euro"):
    advisor.respond(text, thread_id=thread)
gc.callbacks.append(hook)
answer = advisor.respond("e con 4 GPU?", thread_id=thread)["answer"]
gc.callbacks.remove(hook)
advisor.close()
print(json.dumps({"before": before, "started": started, "warm": gc.get_freeze_count(),
                  "threshold": gc.get_threshold()[0], "answer": bool(answer), "generations": generations}))
"""


def test_warm_advisor_heap_is_frozen_and_turns_still_answer(tmp_path: Path) -> None:
    """Construction freezes the startup heap, the warm caches are frozen after the first turns, young collections
    wait for more allocations, a warm turn runs no full (generation-2) collection, and turns keep answering. The
    pause lengths are figures, not assertions: benchmarks/gc_pauses.py prints them beside an untuned baseline."""
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[1],
        check=True,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["before"]["frozen"] == 0
    assert result["started"] > 10_000, "the heap built by construction is frozen"
    assert result["warm"] > result["started"], "objects cached by the first turns are frozen too"
    assert result["threshold"] >= 10_000 > result["before"]["threshold"]
    assert result["answer"]
    assert 2 not in result["generations"], result["generations"]


PLAIN = """
import gc, json, sys
from pathlib import Path
from agent.service import Advisor
home = Path(sys.argv[1])
before = (gc.get_freeze_count(), gc.get_threshold())
advisor = Advisor(checkpoint_path=home / "threads.sqlite", db_path=home / "catalog.sqlite")
advisor.respond("LoRA on Llama 3.2 1B with 5k examples")
advisor.close()
print(json.dumps(before == (gc.get_freeze_count(), gc.get_threshold())))
"""


def test_a_plain_advisor_leaves_the_collector_alone(tmp_path: Path) -> None:
    """Constructing an Advisor (a library use) neither freezes the heap nor changes thresholds: only the entry
    points that answer many turns opt in (agent.gc_tuning.for_long_running)."""
    out = subprocess.run(
        [sys.executable, "-c", PLAIN, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[1],
        check=True,
    )
    assert json.loads(out.stdout) is True
