"""How close a chat turn is to the work it must do (issue 14), measured side by side in one run.

Essential work of a turn = offline parse + one estimate with fit search + one indexed catalog query (10 rows): the
strict baseline. The issue's irreducible turn adds what any answer must do: a decision loop over the ~1,100 cached
candidates (fit check, hours, cost, the ten cheapest), the answer's text and its JSON (printed too, with ratios).
Printed: warm turn p50/p95 for new jobs and follow-ups (it/id/en) and their ratio to the essential work, the
longest garbage-collector pause over the run, the CPU time of a cold `recommend` and the wall time of `--help`
(with `python -c pass` as the baseline).

Run: .venv/bin/python benchmarks/turn_overhead.py [--turns 1000] [--fresh | --never-seen] [--no-cold]
"""

from __future__ import annotations

import argparse
import gc
import heapq
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agent.gc_tuning import for_long_running  # what serve and chat do: a long-running advisor
from agent.parsing.parse import parse_message
from agent.service import Advisor
from tools.catalog import candidate_groups
from tools.catalog.query import query_offers
from tools.gpus import lookup_gpu
from tools.memory.estimator import estimate_for_spec

JOB_TEMPLATES = [
    ("QLoRA su Llama 3 70B, budget {n} euro, vanno bene le spot?", 300),
    ("LoRA pada Mistral 7B, {n} ribu contoh, anggaran 2 juta rupiah", 10),
    ("Full fine-tune Llama 3.1 8B on {n}M tokens within 24 hours, no spot", 100),
    ("fine-tuning completo di Llama 3.2 1B su {n}k esempi, una sola GPU", 50),
    ("QLoRA Qwen2.5 14B dengan {n} ribu contoh, boleh spot", 20),
    ("pretrain GPT-2 small from scratch on 10B tokens, budget ${n}", 200),
]
"""New-job messages with a number that --fresh changes on every turn (budget, examples or tokens)."""
NEVER_SEEN_TEMPLATES = [
    ("QLoRA su Qwen2.5 14B, sequenze di {n} token, budget 100 euro", 1000),
    ("LoRA on Llama 3.1 8B, 10k examples, sequence length {n} tokens, budget $50", 1000),
    ("fine-tune penuh Llama 3.2 1B, panjang konteks {n} token, 20 ribu contoh", 500),
    ("QLoRA Mistral 7B, context {n} tokens, 5k examples, spot ok", 1000),
    ("LoRA su Llama 3 70B, sequenze di {n} token, budget 500 euro", 1000),
    ("Full fine-tune Qwen2.5 1.5B, sequence length {n} tokens, 50M tokens, no spot", 500),
]
"""--never-seen: new jobs whose sequence length moves on every turn, so every memory question is new."""
NEW_JOBS = [text.format(n=n) for text, n in JOB_TEMPLATES]
FOLLOW_UPS = [
    "e con 4 GPU?",
    "kalau pakai QLoRA?",
    "cheaper?",
    "e se uso le spot?",
    "yang lebih cepat?",
    "and with 8 GPUs?",
]


def _percentile(values: list[float], share: float) -> float:
    """The value below which `share` of the sorted values fall."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * (len(ordered) - 1) + 0.5))]


def essential_one(text: str, db_path: Path) -> float:
    """Milliseconds of the essential work for one message: parse, estimate with fit search, one catalog query."""
    start = time.perf_counter()
    spec = parse_message(text, use_llm=False).spec
    estimate = estimate_for_spec(spec, gpu="H100")
    query_offers(db_path, min_vram_gib=min(estimate.per_gpu_gib, 80.0), limit=10)
    return (time.perf_counter() - start) * 1000


def irreducible_one(text: str, db_path: Path) -> float:
    """Milliseconds of the issue's irreducible turn: parse, one estimate, a decision loop over the cached candidates
    (fits at 95 % of memory, hours from FLOPs at 40 % of dense peak, cost, the ten cheapest), text and JSON."""
    start = time.perf_counter()
    spec = parse_message(text, use_llm=False).spec
    estimate = estimate_for_spec(spec, gpu="H100")
    flops = 6.0 * estimate.total_params * 1e9
    groups = candidate_groups(str(db_path), db_path.stat().st_mtime, None, None, None)
    costed = []
    for group, _shape in groups:
        offer, spec_gpu = group.offer, lookup_gpu(group.offer.gpu, group.offer.gpu_form_factor)
        price, tflops = group.on_demand, spec_gpu.bf16_tflops if spec_gpu else None
        if not price or not tflops or (offer.vram_gib_per_gpu or 0.0) * 0.95 < estimate.per_gpu_gib:
            continue
        hours = flops / (tflops * 1e12 * 0.4 * offer.gpu_count) / 3600
        costed.append((hours * price, hours, offer.provider, offer.instance_type, offer.gpu, offer.gpu_count))
    top = heapq.nsmallest(10, costed)
    answer = "\n".join(
        f"{gpu} x{n} on {provider} ({kind}): {hours:.1f} h, ${cost:.2f}" for cost, hours, provider, kind, gpu, n in top
    )
    json.dumps(
        {
            "reply": answer,
            "offers": [dict(zip(("cost", "hours", "provider", "instance", "gpu", "count"), row)) for row in top],
        }
    )
    return (time.perf_counter() - start) * 1000


def essential_ms(db_path: Path, rounds: int = 5) -> list[float]:
    """The essential work in a tight loop over the six job messages (the baseline the issue's targets were set
    against; hot caches make it the smaller, stricter baseline)."""
    return [essential_one(text, db_path) for _ in range(rounds) for text in NEW_JOBS]


ESSENTIAL_OFFSET = 1_000_000
"""The essential work is timed on a sibling of each new job (its number moved by this much), so that neither warms
a cache for the other."""


def new_job(index: int, fresh: bool | str) -> str:
    """The index-th new-job message; with `fresh`, a job never asked before (its number moves on every turn); with
    fresh == "never-seen", its sequence length moves (a new memory question on every turn)."""
    if fresh == "never-seen":
        text, number = NEVER_SEEN_TEMPLATES[index % len(NEVER_SEEN_TEMPLATES)]
        return text.format(n=number + 7 * (index % ESSENTIAL_OFFSET) + (3 if index >= ESSENTIAL_OFFSET else 0))
    text, number = JOB_TEMPLATES[index % len(JOB_TEMPLATES)]
    return text.format(n=number + (index + 1 if fresh else 0))


def turn_ms(
    advisor: Advisor, turns: int, fresh: bool | str = False
) -> tuple[list[float], list[float], list[float], list[float]]:
    """Warm turn times: a new thread per job message, each followed by one follow-up on that thread; before each
    job, one sample of the essential work (interleaved, so that a machine slowing down or speeding up during the
    run moves both sides of the ratio alike)."""
    new, follow, essential, irreducible = [], [], [], []
    for index in range(turns // 2):
        essential.append(essential_one(new_job(index + ESSENTIAL_OFFSET, fresh), advisor.db_path))
        irreducible.append(irreducible_one(new_job(index + 2 * ESSENTIAL_OFFSET, fresh), advisor.db_path))
        start = time.perf_counter()
        thread = advisor.respond(new_job(index, fresh))["thread_id"]
        new.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        advisor.respond(FOLLOW_UPS[index % len(FOLLOW_UPS)], thread_id=thread)
        follow.append((time.perf_counter() - start) * 1000)
    return new, follow, essential, irreducible


class GcPauses:
    """Collect the duration of every garbage collection while installed."""

    def __init__(self) -> None:
        self.pauses: list[tuple[int, float]] = []
        self.cpu: list[float] = []
        self._started = 0.0
        self._cpu_started = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        """gc.callbacks hook: wall time (what a user waits, preemption by other processes included) and this
        thread's CPU time (the collector's own work)."""
        if phase == "start":
            self._started = time.perf_counter()
            self._cpu_started = time.thread_time()
        else:
            self.pauses.append((info["generation"], (time.perf_counter() - self._started) * 1000))
            self.cpu.append((time.thread_time() - self._cpu_started) * 1000)


def _cold(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Median wall ms and median child CPU seconds of a fresh process, after one untimed run (a new process with
    its disk caches warm: bytecode written, catalog built, as for a user's second command)."""
    subprocess.run(args, env=env, capture_output=True, check=True)
    walls, cpus = [], []
    for _ in range(3):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(args, env=env, capture_output=True, check=True)
        walls.append((time.perf_counter() - start) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    """Print the figures and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000, help="warm turns to time (half new jobs, half follow-ups)")
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="every new job differs from all before it (a number in "
        "it moves), so nothing cached per job helps; default: six job messages recur in new threads",
    )
    parser.add_argument(
        "--never-seen",
        action="store_true",
        help="every new job has a sequence length never asked "
        "before (a new memory question, nothing cached per workload helps)",
    )
    parser.add_argument("--no-cold", action="store_true", help="skip the cold-start figures")
    args = parser.parse_args()
    turns = args.turns
    fresh: bool | str = "never-seen" if args.never_seen else args.fresh
    home = Path(tempfile.mkdtemp(prefix="gpu-advisor-overhead-"))
    advisor = for_long_running(Advisor(checkpoint_path=home / "threads.sqlite", db_path=home / "catalog.sqlite"))
    for text in NEW_JOBS:  # warm caches: catalog rows, KB indexes, lexicons
        advisor.respond(text)
        essential_one(text, advisor.db_path)
    essential = essential_ms(advisor.db_path)
    pauses = GcPauses()
    gc.callbacks.append(pauses)
    try:
        new, follow, between, irreducible = turn_ms(advisor, turns, fresh)
    finally:
        gc.callbacks.remove(pauses)
        advisor.close()
    base50, base95 = statistics.median(essential), _percentile(essential, 0.95)
    mixed50, mixed95 = statistics.median(between), _percentile(between, 0.95)
    full50, full95 = statistics.median(irreducible), _percentile(irreducible, 0.95)
    print(
        "new jobs: "
        + (
            "every one with a sequence length never asked before (--never-seen)"
            if args.never_seen
            else "each one never asked before (--fresh)"
            if args.fresh
            else "six messages recurring in new threads (per-job caches hit; --never-seen for new memory)"
        )
    )
    print(
        f"essential work (parse + estimate with fit + 1 indexed query), tight loop: p50 {base50:.1f} ms, "
        f"p95 {base95:.1f} ms  <- the ratios below"
    )
    print(
        f"essential work timed between the turns (cold CPU caches, same machine speed): p50 {mixed50:.1f} ms, "
        f"p95 {mixed95:.1f} ms  <- ratios in brackets"
    )
    print(
        f"irreducible turn (+ decision loop over {len(candidate_groups(str(advisor.db_path), advisor.db_path.stat().st_mtime, None, None, None))} "
        f"candidates, text, JSON), between the turns: p50 {full50:.1f} ms, p95 {full95:.1f} ms  <- ratios in braces"
    )
    for label, values in (("new job", new), ("follow-up", follow), ("all turns", new + follow)):
        p50, p95 = statistics.median(values), _percentile(values, 0.95)
        print(
            f"{label:10} p50 {p50:7.1f} ms ({p50 / base50:4.1f}x [{p50 / mixed50:3.1f}x] {{{p50 / full50:3.1f}x}})   "
            f"p95 {p95:7.1f} ms ({p95 / base95:4.1f}x [{p95 / mixed95:3.1f}x] {{{p95 / full95:3.1f}x}})   n={len(values)}"
        )
    worst = max(pauses.pauses, key=lambda item: item[1], default=(None, 0.0))
    over = sum(1 for _, ms in pauses.pauses if ms > 20)
    print(
        f"garbage collector: {len(pauses.pauses)} collections, longest {worst[1]:.1f} ms wall (generation "
        f"{worst[0]}), longest {max(pauses.cpu, default=0.0):.1f} ms CPU; {over} over 20 ms wall"
    )
    mode = (" --never-seen" if args.never_seen else " --fresh" if args.fresh else "") + (
        " --no-cold" if args.no_cold else ""
    )
    if args.no_cold:
        print(f"reproduce: .venv/bin/python benchmarks/turn_overhead.py --turns {turns}{mode}")
        return
    env = dict(os.environ, GPU_ADVISOR_HOME=str(home))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # with it set, every run recompiles the modules changed since install
    exe = str(Path(sys.executable).parent / "gpu-advisor")
    base_wall, base_cpu = _cold([sys.executable, "-c", "pass"], env)
    help_wall, help_cpu = _cold([exe, "--help"], env)
    rec_wall, rec_cpu = _cold([exe, "recommend", "--json", NEW_JOBS[0]], env)
    print(f"python -c pass          {base_wall:6.0f} ms wall {base_cpu:5.2f} s CPU")
    print(f"gpu-advisor --help      {help_wall:6.0f} ms wall {help_cpu:5.2f} s CPU ({help_cpu / base_cpu:.0f}x)")
    print(f"gpu-advisor recommend   {rec_wall:6.0f} ms wall {rec_cpu:5.2f} s CPU ({rec_cpu / base_cpu:.0f}x)")
    print(f"reproduce: .venv/bin/python benchmarks/turn_overhead.py --turns {turns}{mode}")


if __name__ == "__main__":
    main()
