"""Score the whole agent offline: spec fields after single and multi-turn conversations, and recommendation checks.

Single-turn requests are the parser's sets (evals/parse/requests_*.jsonl) run through the full graph: the parser was
tuned on those sets to 100 %, so their field accuracy is labelled TUNED (not a measure of unseen requests); multi-turn
scripts are in scripts.jsonl. Every turn that ends in offers is checked against the raw catalog rows (sqlite3 on the
catalog file, no product code) with independent arithmetic: the headline's instance exists at the price shown (its
on-demand, spot or market price times its nodes), its memory estimate is below that row's memory, its cost is at least
price x hours (billing only rounds up), it is within the budget (converted with rates written in the runner, not the product's) and the deadline, it is not
interruptible when spot is forbidden (spot or a market-priced provider), it matches the GPU/count wishes, and no raw
row of the same GPU model and count (same wishes, allowed pricing, not flagged as an outlier) is more than 5 %
cheaper per hour (the product may lead with a simpler near-tie).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
from collections import defaultdict
from importlib import resources
from pathlib import Path
from typing import Any

from agent.service import Advisor
from evals.scored_path import add_llm_flag, choose_path


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


NEAR_TIE = 0.05
"""The product may lead with a simpler offer up to 5 % dearer (tools.ranking.headline); cheaper rows beyond that are misses."""


def _rows(db_path: Path, sql: str, params: tuple[Any, ...]) -> list[sqlite3.Row]:
    """Raw catalog rows (read-only connection)."""
    connection = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    connection.row_factory = sqlite3.Row
    try:
        return connection.execute(sql, params).fetchall()
    finally:
        connection.close()


USD_PER_UNIT = {"USD": 1.0, "EUR": 1.1269, "IDR": 1.1269 / 20104.80}
"""USD per unit of a budget's currency, written here by hand from the ECB reference rates of 2026-10-06 (1 EUR =
1.1269 USD = 20,104.80 IDR), the date the shipped table carries: the budget check does not use the product's rate
table or its conversion, so a change to either shows up as a budget miss here."""


def _rate(row: sqlite3.Row, spot: bool) -> float | None:
    """The hourly price of a raw row for the pricing kind (a market-priced on-demand counts as interruptible)."""
    market = bool(row["on_demand_is_market"]) if "on_demand_is_market" in row else False
    if spot:
        return row["spot_price_per_hour"] or (row["price_per_hour"] if market else None)
    return None if market else row["price_per_hour"]


def check_recommendation(result: dict[str, Any], db_path: Path) -> dict[str, bool]:
    """Recommendation checks for one turn with offers, recomputed from raw catalog rows."""
    spec, top = result["spec"], result["offers"][0]
    nodes = int(top.get("nodes") or 1)
    rows = _rows(
        db_path,
        "SELECT * FROM offers WHERE provider = ? AND instance_type = ? AND (region IS ? OR region = ?)",
        (top["provider"], top["instance_type"], top["region"], top["region"]),
    )
    checks = {"row_exists": bool(rows)}
    if not rows:
        return checks
    spot = bool(top["spot"])
    rates = [r for r in (_rate(row, spot) for row in rows) if r]
    checks["price_matches_row"] = any(abs(r * nodes - top["price_per_hour"]) <= 1e-6 * max(1.0, r) for r in rates)
    checks["fits_row_memory"] = top["per_gpu_gib"] is not None and all(
        top["per_gpu_gib"] <= row["vram_gib_per_gpu"] for row in rows if row["vram_gib_per_gpu"]
    )
    # on spot too: its expected cost is the price times the expected billed hours, restarts included, and est_hours
    # is that expected run, so billing can only round it up (was 'or spot', which passed every spot turn unchecked)
    checks["cost_at_least_rate_x_hours"] = top["est_cost"] >= top["price_per_hour"] * top["est_hours"] * (1 - 1e-6)
    if spec.get("interruptible_ok") is False:
        market = any(row["on_demand_is_market"] for row in rows if "on_demand_is_market" in row)
        checks["no_spot"] = not spot and not market
    if spec.get("gpu"):
        family = spec["gpu"].split("-")[0].lower()
        checks["gpu_wish"] = top["gpu"].lower().startswith(family)
    if spec.get("num_gpus"):
        checks["count_wish"] = top["total_gpus"] == spec["num_gpus"]
    budget = spec.get("budget")
    if budget:
        rate = USD_PER_UNIT.get(budget["currency"].upper())
        checks["budget"] = rate is not None and top["est_cost"] <= budget["amount"] * rate * (1 + 1e-6)
    if spec.get("deadline_hours"):
        checks["deadline"] = top["est_hours"] <= spec["deadline_hours"] * (1 + 1e-9)
    where, params = (
        ["gpu = ?", "gpu_count = ?", "(price_outlier IS NULL OR price_outlier = '')"],
        [top["gpu"], top["gpu_count"]],
    )
    if spec.get("providers"):
        where.append(f"provider IN ({', '.join('?' for _ in spec['providers'])})")
        params.extend(spec["providers"])
    if spec.get("regions"):
        wanted = [r.lower() for r in spec["regions"]]
        marks = ", ".join("?" for _ in wanted)
        where.append(f"(lower(region) IN ({marks}) OR lower(zone) IN ({marks}))")
        params.extend(wanted + wanted)
    if nodes > 1:  # a multi-node plan needs the fabric: compare with rows that state the same kind of fabric
        where.append(
            "inter_node_gbps_per_gpu IS NOT NULL"
            if top["topology_params"].get("inter_node_fabric")
            or top["topology_params"].get("inter_node_gbps") not in (None, 100.0)
            else "1 = 1"
        )
    peers = _rows(db_path, "SELECT * FROM offers WHERE " + " AND ".join(where), tuple(params))
    peer_rates = [r for r in (_rate(row, spot) for row in peers) if r]
    own = top["price_per_hour"] / nodes
    checks["cheapest_same_hardware"] = not peer_rates or min(peer_rates) >= own / (1 + NEAR_TIE) - 1e-9
    return checks


def main(argv: list[str] | None = None) -> int:
    """Print field accuracy per language and field, multi-turn accuracy, recommendation checks and latency."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quiet", action="store_true", help="do not list the misses")
    add_llm_flag(parser)
    args = parser.parse_args(argv)
    print(f"scored path: {choose_path(args.llm)}")
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

    print(
        "field accuracy (spec after the conversation, full graph; single-* rows are the parser's own sets, "
        "TUNED to 100 %, multi-* are scripts.jsonl):"
    )
    for group, oks in sorted(fields.items()):
        print(f"  {group:10} {sum(oks):4d}/{len(oks):<4d} {100 * sum(oks) / len(oks):6.1f} %")
    print("by field:")
    for name, oks in sorted(per_field.items()):
        print(f"  {name:24} {sum(oks):4d}/{len(oks):<4d} {100 * sum(oks) / len(oks):6.1f} %")
    print("recommendation checks (turns with offers):")
    for name, oks in sorted(checks.items()):
        print(f"  {name:12} {sum(oks):4d}/{len(oks):<4d} {100 * sum(oks) / len(oks):6.1f} %")
    ordered = sorted(latencies)
    print(
        f"turn latency in process: p50 {1000 * ordered[len(ordered) // 2]:.1f} ms, "
        f"p95 {1000 * ordered[int(0.95 * (len(ordered) - 1))]:.1f} ms over {len(ordered)} turns"
    )
    if misses and not args.quiet:
        print("misses:")
        for line in misses:
            print("  " + line)
    print("reproduce: .venv/bin/python -m evals.recommend")
    return 0
