"""Score the whole agent offline: spec fields after single and multi-turn conversations, and recommendation checks.

Single-turn requests are the parser's sets (evals/parse/requests_*.jsonl) run through the full graph; multi-turn
scripts are in scripts.jsonl. Every turn that ends in offers is checked: the top offer fits, respects the budget,
the deadline, the spot preference and the GPU/count wishes when an offer that does exists, and is the cheapest such
offer among every eligible offer in the catalog (ranking with no limit).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import defaultdict
from importlib import resources
from pathlib import Path
from typing import Any

from agent.service import Advisor
from contract.jobspec import JobSpec
from tools.ranking import rank_offers


def _load(package: str, name: str) -> list[dict[str, Any]]:
    """Rows of a JSONL file shipped in a package."""
    text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _same(expected: Any, got: Any) -> bool:
    """Field equality with a float tolerance (budgets, sizes)."""
    if isinstance(expected, dict) and isinstance(got, dict):
        return all(_same(v, got.get(k)) for k, v in expected.items())
    if isinstance(expected, list) and isinstance(got, list):
        return sorted(map(str, expected)) == sorted(map(str, got))  # providers/regions are sets
    if isinstance(expected, (int, float)) and isinstance(got, (int, float)) and not isinstance(expected, bool):
        return abs(expected - got) <= 1e-6 * max(1.0, abs(expected))
    return expected == got


def check_recommendation(result: dict[str, Any], db_path: Path) -> dict[str, bool]:
    """Recommendation checks for one turn with offers (a check is only made when it applies)."""
    spec, top = result["spec"], result["offers"][0]
    checks = {"fits": bool(top["fits"]) and top["per_gpu_gib"] <= top["vram_gib_per_gpu"]}
    if spec.get("interruptible_ok") is False:
        checks["no_spot"] = not top["spot"]
    if spec.get("gpu"):
        checks["gpu_wish"] = top["gpu"] == spec["gpu"]
    if spec.get("num_gpus"):
        checks["count_wish"] = top["total_gpus"] == spec["num_gpus"]
    full = rank_offers(JobSpec.model_validate(spec), db_path=db_path, limit=100_000)
    if spec.get("budget") and any(o.meets_budget for o in full.offers):
        checks["budget"] = top["meets_budget"] is True
    if spec.get("deadline_hours") and any(o.meets_deadline for o in full.offers):
        checks["deadline"] = top["meets_deadline"] is True
    checks["cheapest"] = abs(top["est_cost"] - min(o.est_cost for o in full.offers)) < 1e-6
    return checks


def main(argv: list[str] | None = None) -> int:
    """Print field accuracy per language and field, multi-turn accuracy, recommendation checks and latency."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quiet", action="store_true", help="do not list the misses")
    args = parser.parse_args(argv)
    home = Path(tempfile.mkdtemp(prefix="gpu-advisor-eval-"))
    advisor = Advisor(checkpoint_path=home / "threads.sqlite", db_path=home / "catalog.sqlite")
    fields: dict[str, list[bool]] = defaultdict(list)
    per_field: dict[str, list[bool]] = defaultdict(list)
    checks: dict[str, list[bool]] = defaultdict(list)
    misses: list[str] = []
    latencies: list[float] = []

    def run(label: str, language: str, turns: list[str], expected: dict[str, Any]) -> None:
        thread = None
        result: dict[str, Any] = {}
        for text in turns:
            start = time.perf_counter()
            result = advisor.respond(text, thread_id=thread)
            latencies.append(time.perf_counter() - start)
            thread = result["thread_id"]
            if result["offers"]:
                for name, ok in check_recommendation(result, advisor.db_path).items():
                    checks[name].append(ok)
                    if not ok:
                        misses.append(f"{label}: check {name} failed on {text!r}")
        for name, value in expected.items():
            ok = _same(value, (result.get("spec") or {}).get(name))
            fields[f"{label.split(':')[0]}"].append(ok)
            per_field[name].append(ok)
            if not ok:
                misses.append(f"{label}: {name} expected {value!r} got {(result.get('spec') or {}).get(name)!r}")

    for language in ("it", "id", "en"):
        for row in _load("evals.parse", f"requests_{language}.jsonl"):
            run(f"single-{language}: {row['text'][:50]}", language, [row["text"]], row["expected"])
    for script in _load("evals.recommend", "scripts.jsonl"):
        run(f"multi-{script['language']}: {script['id']}", script["language"], script["turns"], script["expected"])
    advisor.close()

    print("field accuracy (spec after the conversation, full graph):")
    for group, oks in sorted(fields.items()):
        print(f"  {group:10} {sum(oks):4d}/{len(oks):<4d} {100 * sum(oks) / len(oks):6.1f} %")
    print("by field:")
    for name, oks in sorted(per_field.items()):
        print(f"  {name:24} {sum(oks):4d}/{len(oks):<4d} {100 * sum(oks) / len(oks):6.1f} %")
    print("recommendation checks (turns with offers):")
    for name, oks in sorted(checks.items()):
        print(f"  {name:12} {sum(oks):4d}/{len(oks):<4d} {100 * sum(oks) / len(oks):6.1f} %")
    ordered = sorted(latencies)
    print(f"turn latency in process: p50 {1000 * ordered[len(ordered) // 2]:.1f} ms, "
          f"p95 {1000 * ordered[int(0.95 * (len(ordered) - 1))]:.1f} ms over {len(ordered)} turns")
    if misses and not args.quiet:
        print("misses:")
        for line in misses:
            print("  " + line)
    print("reproduce: .venv/bin/python -m evals.recommend")
    return 0
