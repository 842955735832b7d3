"""Score the offline advisor's headline recommendation against expert expectations (requests.jsonl).

Each request runs as one chat turn through the full graph (no LLM). Checks, each only where the row states it:
feasible (offers shown or not), hardware (the headline offer matches one accepted GPU class/name, total GPU count
range and single/multi-node), spot (the headline is interruptible or not: spot capacity or a market-priced
"on-demand" price), binding (for an impossible job, the limit that binds: memory, compute, deadline or budget,
read from the turn, never recomputed by the product's ranking), no_zero_hours (the
answer never says a job takes "0.0 hours"), and the optional layout (the headline's parallel layout is one of those
accepted; HSDP, FSDP sharded inside each node and replicated across nodes, counts as "fsdp"), hours (the headline's
est_hours within [min, max]) and on_demand_shown (when the headline is interruptible, a plan that is not, and that
neither misses the budget nor the deadline, is among the turn's offers or alternatives; not checked when the
headline is on-demand). Expectations come from first principles (seed articles, reference/hardware.md), not from
the product's output.

Sets: requests.jsonl (the default, `--set requests`), requests_x24.jsonl (`--set x24`: the blind set written for
issue 24) and the third blind set's halves (`--set x3`, `--set x3-heldout`), scored apart.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from collections import defaultdict
from importlib import resources
from pathlib import Path
from typing import Any

from evals.scored_path import add_llm_flag, choose_path

CLASSES: dict[str, tuple[float, float]] = {
    "16GB": (14.0, 20.0),
    "24GB": (20.0, 36.0),
    "48GB": (36.0, 60.0),
    "80GB": (60.0, 120.0),
    "141GB+": (120.0, 10_000.0),
}
"""GPU memory classes by GiB per GPU: [low, high)."""
SETS = {
    "requests": "requests.jsonl",
    "x24": "requests_x24.jsonl",
    "x3": "requests_x3_tune.jsonl",
    "x3-heldout": "requests_x3_heldout.jsonl",
}
"""Eval sets by name: each is scored on its own. x3 is the third blind set (x3_PROMPT.md), split by row: the tune half
may guide changes, the held-out half is only ever scored (tests/test_heldout_guard.py)."""
LAYOUT_ALIASES = {"hsdp": "fsdp"}
"""Layouts the product names that an expectation's list names otherwise."""
ZERO_HOURS = re.compile(r"\b0[.,]0\s*(h\b|ore\b|hours?\b|jam\b)", re.IGNORECASE)


def load_requests(name: str = "requests") -> list[dict[str, Any]]:
    """Rows of one eval set (SETS)."""
    text = resources.files("evals.advice").joinpath(SETS[name]).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def gpu_class(vram_gib: float | None) -> str | None:
    """Memory class of a GPU (None when unknown)."""
    if vram_gib is None:
        return None
    return next((name for name, (low, high) in CLASSES.items() if low <= vram_gib < high), None)


def interruptible(offer: dict[str, Any]) -> bool:
    """True when the headline price can be taken away: spot, or a provider's market price shown as on-demand."""
    return bool(offer.get("spot") or (offer.get("on_demand_is_market") and not offer.get("spot")))


def matches(offer: dict[str, Any], accept: dict[str, Any]) -> bool:
    """Whether an offer is one of the accepted hardware choices."""
    if "class" in accept and gpu_class(offer.get("vram_gib_per_gpu")) not in accept["class"]:
        return False
    if "gpus" in accept and offer.get("gpu") not in accept["gpus"]:
        return False
    low, high = accept.get("total_gpus", [1, 100_000])
    if not low <= int(offer.get("total_gpus") or 0) <= high:
        return False
    nodes = int(offer.get("nodes") or 1)
    wanted = accept.get("nodes", "any")
    return wanted == "any" or (wanted == "single") == (nodes == 1)


def layout_ok(offer: dict[str, Any], accepted: list[str]) -> bool:
    """Whether the offer's parallel layout is one of the accepted ones."""
    layout = offer.get("layout") or ("single_gpu" if int(offer.get("total_gpus") or 1) == 1 else None)
    return layout in accepted or LAYOUT_ALIASES.get(layout or "") in accepted


def on_demand_shown(result: dict[str, Any]) -> bool | None:
    """None when the headline is not interruptible; else whether a plan that is not, within budget and deadline,
    is among the turn's other offers or its alternatives."""
    offers = result.get("offers") or []
    if not offers or not interruptible(offers[0]):
        return None
    alternatives = result.get("alternatives") or {}
    shown = [*offers[1:], *(v for v in alternatives.values() if isinstance(v, dict))]
    return any(
        not interruptible(o) and o.get("meets_budget") is not False and o.get("meets_deadline") is not False
        for o in shown
    )


def binding_of(result: dict[str, Any], db_path: Path) -> str | None:
    """The limit that binds, as the turn itself reports it (None when it reports none: the check then fails; the
    eval never asks the ranking code for a verdict the user did not get). `db_path` is kept for the callers."""
    for source in (result, result.get("ranking") or {}):
        if source.get("binding_limit"):
            return str(source["binding_limit"])
    return None


def check_row(row: dict[str, Any], result: dict[str, Any], db_path: Path) -> dict[str, bool]:
    """Checks for one request (only those its expectations state)."""
    expect, offers = row["expect"], result.get("offers") or []
    checks = {
        "feasible": bool(offers) == expect["feasible"],
        "no_zero_hours": not ZERO_HOURS.search(result.get("answer") or ""),
    }
    if expect["feasible"]:
        top = offers[0] if offers else {}
        checks["hardware"] = bool(top) and any(matches(top, a) for a in expect.get("accept", [{}]))
        if expect.get("spot") is not None:
            checks["spot"] = bool(top) and interruptible(top) == expect["spot"]
        if expect.get("layout"):
            checks["layout"] = bool(top) and layout_ok(top, expect["layout"])
        if expect.get("hours"):
            low, high = expect["hours"]
            checks["hours"] = bool(top) and low <= float(top.get("est_hours") or 0.0) <= high
        if expect.get("on_demand_shown"):
            shown = on_demand_shown(result)
            if shown is not None:
                checks["on_demand_shown"] = shown
    else:
        checks["binding"] = binding_of(result, db_path) in expect["binding"]
    return checks


def describe(result: dict[str, Any]) -> str:
    """Short view of the headline pick for the misses list."""
    offers = result.get("offers") or []
    if not offers:
        return f"no offer (excluded {result.get('excluded')}, missing {result.get('missing')})"
    top = offers[0]
    return (
        f"{top['nodes']}x {top['provider']} {top['instance_type']} ({top['total_gpus']}x {top['gpu']}, "
        f"{top.get('vram_gib_per_gpu')} GiB), spot={top['spot']}, {top['est_hours']:.2f} h, "
        f"${top['est_cost']:.2f}, layout={top.get('layout')}"
    )


def main(argv: list[str] | None = None) -> int:
    """Print the score per check and language, the rows fully right, and the misses."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quiet", action="store_true", help="do not list the misses")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    parser.add_argument("--set", default="requests", choices=sorted(SETS), help="which eval set to score")
    add_llm_flag(parser)
    args = parser.parse_args(argv)
    path = choose_path(args.llm)  # the offline advisor unless --llm
    from agent.service import Advisor

    home = Path(tempfile.mkdtemp(prefix="gpu-advisor-advice-"))
    advisor = Advisor(checkpoint_path=home / "threads.sqlite", db_path=home / "catalog.sqlite")
    per_check: dict[str, list[bool]] = defaultdict(list)
    per_language: dict[str, list[bool]] = defaultdict(list)
    misses: list[str] = []
    try:
        for row in load_requests(args.set):
            try:
                result = advisor.respond(row["text"])
            except Exception as error:
                per_check["no_crash"].append(False)
                per_language[row["language"]].append(False)
                misses.append(f"{row['id']}: crashed: {type(error).__name__}: {str(error)[:120]}")
                continue
            checks = check_row(row, result, advisor.db_path)
            for name, ok in checks.items():
                per_check[name].append(ok)
            per_language[row["language"]].append(all(checks.values()))
            if not all(checks.values()):
                failed = ", ".join(name for name, ok in checks.items() if not ok)
                misses.append(
                    f"{row['id']}: {failed}: {describe(result)}"
                    + (f"; binding={binding_of(result, advisor.db_path)}" if "binding" in checks else "")
                )
    finally:
        advisor.close()
    rows = [ok for oks in per_language.values() for ok in oks]
    scores = {
        "set": SETS[args.set],
        "path": path,
        "rows_right": sum(rows),
        "rows": len(rows),
        "checks": {name: [sum(oks), len(oks)] for name, oks in sorted(per_check.items())},
        "languages": {lang: [sum(oks), len(oks)] for lang, oks in sorted(per_language.items())},
    }
    if args.json:
        print(json.dumps(scores | {"misses": misses}, indent=2))
        return 0
    print(f"set: {SETS[args.set]}")
    print(f"scored path: {path}")
    print(f"requests fully right: {sum(rows)}/{len(rows)} = {100 * sum(rows) / len(rows):.1f} %")
    for lang, oks in sorted(per_language.items()):
        print(f"  {lang}: {sum(oks)}/{len(oks)}")
    print("by check:")
    for name, oks in sorted(per_check.items()):
        print(f"  {name:14} {sum(oks):3d}/{len(oks):<3d} {100 * sum(oks) / len(oks):6.1f} %")
    if misses and not args.quiet:
        print("misses:")
        for line in misses:
            print("  " + line)
    print("reproduce: .venv/bin/python -m evals.advice" + (f" --set {args.set}" if args.set != "requests" else ""))
    return 0
