"""Run the scripted dialogues through the real advisor (offline) and score each turn's behaviour.

Dialogues live in dialogues.<lang>.jsonl: {"id", "turns": [{"say": text, checks...}]}. Checks a turn may carry:
- kind: what the answer is ("recommendation", "yes_no", "delta", "compare", "declined", "faq", "ask_back"); read
  from the result's `verdict.answer_kind` when present, else inferred from `intent`;
- yes_no: "yes"/"no": the answer's first word says it (Yes/Sì/Ya..., No/Tidak...);
- changed: the JobSpec fields that differ from the previous turn's spec (exactly these);
- top: "fastest"/"cheapest": the first offer has the fewest hours / the lowest raw-row cost of every eligible plan of
  the tool's full listing for the turn's job (the offers were re-ranked);
- not_rerun: no offers and the spec unchanged (off-topic or refused inside a job thread);
- spec: fields the spec must hold after the turn; contains / not_contains: regexes on the answer;
- max_lines: answer length at 80 columns (defaults per kind, below).
Every turn is also checked for: verdict first (a recommendation with offers names GPU, provider and total cost,
and the budget/deadline when given, in its first three lines), clean text (no internal paths, no "il 0 %", no
"?."), and length. Score = checks passed / checks made.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import tempfile
import textwrap
from collections import defaultdict
from importlib import resources
from pathlib import Path
from typing import Any

from agent.service import Advisor
from evals.scored_path import add_llm_flag, choose_path

LANGUAGES = ("it", "id", "en")
INTENT_KIND = {
    "job_request": "recommendation",
    "follow_up": "recommendation",
    "out_of_scope": "declined",
    "injection": "declined",
    "unsupported": "declined",
    "faq": "faq",
    "ask_back": "ask_back",
}
MAX_LINES = {
    "recommendation": 26,
    "follow_up_recommendation": 16,
    "yes_no": 16,
    "delta": 10,
    "compare": 10,
    "declined": 4,
    "ask_back": 6,
    "faq": 30,
}
"""Longest acceptable answer, in lines at 80 columns, per kind (a follow-up repeats only what changed)."""
YES = {"yes", "sì", "si", "ya", "bisa", "cukup", "basta"}
NO = {"no", "tidak", "non", "nope"}
UNCLEAN = [
    r"§",
    r"\.md\b",
    r"shared/",
    r"\bil 0 %",
    r"\?\.",
    r"Traceback",
    r"\b0 % of each step",
    r"\b0 % di ogni",
    r"\b0 % dari",
]


def load_dialogues(language: str) -> list[dict[str, Any]]:
    """The dialogues of one language."""
    text = resources.files("evals.conversations").joinpath(f"dialogues.{language}.jsonl").read_text("utf-8")
    return [json.loads(line) | {"language": language} for line in text.splitlines() if line.strip()]


def answer_kind(result: dict[str, Any]) -> str | None:
    """What kind of answer this is: the structured verdict's kind, else inferred from the intent."""
    verdict = result.get("verdict") or {}
    return verdict.get("answer_kind") or INTENT_KIND.get(result.get("intent") or "")


def wrapped_lines(answer: str) -> list[str]:
    """The answer as a terminal 80 columns wide shows it (markdown marks dropped)."""
    lines: list[str] = []
    for line in answer.replace("**", "").replace("`", "").splitlines():
        lines.extend(textwrap.wrap(line, 80) or [""])
    return lines


def _money_forms(amount: float) -> set[str]:
    """Ways a total cost may be printed (en and it/id separators, 0 or 2 decimals)."""
    forms = set()
    for decimals in (0, 2):
        text = f"{amount:,.{decimals}f}"
        forms |= {text, text.replace(",", "\x00").replace(".", ",").replace("\x00", ".")}
    return forms


def verdict_first(result: dict[str, Any]) -> bool:
    """The first three lines say what to rent, the total cost and (when given) budget and deadline."""
    top = result["offers"][0]
    head = " ".join([line for line in result["answer"].splitlines() if line.strip()][:3]).replace("**", "")
    spec = result.get("spec") or {}
    ok = top["gpu"] in head and top["provider"] in head and any(f in head for f in _money_forms(top["est_cost"]))
    if spec.get("budget"):
        ok = ok and any(f in head for f in _money_forms(spec["budget"]["amount"]))
    if spec.get("deadline_hours"):
        ok = ok and re.search(rf"(?<![\d.,]){spec['deadline_hours']:g}(?![\d])", head) is not None
    return ok


def first_word(answer: str) -> str:
    """The answer's first word, lower case, without markdown."""
    match = re.search(r"[^\W\d_]+", answer.replace("**", ""))
    return match.group(0).lower() if match else ""


def _spec_matches(expected: dict[str, Any], spec: dict[str, Any]) -> bool:
    """Each expected field equals the spec's (floats within 1e-6)."""
    for name, value in expected.items():
        got = spec.get(name)
        if isinstance(value, dict) and isinstance(got, dict):
            if not _spec_matches(value, got):
                return False
        elif isinstance(value, (int, float)) and isinstance(got, (int, float)) and not isinstance(value, bool):
            if abs(value - got) > 1e-6 * max(1.0, abs(value)):
                return False
        elif value != got:
            return False
    return True


def _raw_cost(db_path: Path, offer: dict[str, Any]) -> float | None:
    """Price of the offer's raw catalog row (sqlite3, spot or on-demand as rented) x nodes x its billed hours."""
    with sqlite3.connect(db_path) as connection:
        rows = connection.execute(
            "SELECT price_per_hour, spot_price_per_hour, on_demand_is_market FROM offers "
            "WHERE provider = ? AND instance_type = ? AND region IS ?",
            (offer["provider"], offer["instance_type"], offer.get("region")),
        ).fetchall()
    prices = [
        (spot if spot is not None else od if market else None) if offer["spot"] else (None if market else od)
        for od, spot, market in rows
    ]
    prices = [p for p in prices if p is not None]
    return min(prices) * int(offer.get("nodes") or 1) * offer["billed_hours"] if prices else None


def leads_the_listing(result: dict[str, Any], top: str, db_path: Path) -> bool:
    """'fastest': the headline has the fewest hours of every eligible plan of the tool's full listing for the
    turn's job; 'cheapest': its cost recomputed from its raw row is the lowest of the listing's, recomputed the same
    way (not the turn's own `alternatives`, which come from the same code as the headline)."""
    from contract.jobspec import JobSpec
    from tools.ranking.rank import rank_offers

    plans = [
        o.model_dump()
        for o in rank_offers(JobSpec.model_validate(result["spec"]), db_path=db_path, limit=100_000).offers
    ]
    head = result["offers"][0]
    if top == "fastest":
        return head["est_hours"] <= min(p["est_hours"] for p in plans) * (1 + 1e-9)
    costs = [c for c in (_raw_cost(db_path, p) for p in plans) if c is not None]
    own = _raw_cost(db_path, head)
    return own is not None and abs(own - head["est_cost"]) <= 1e-3 * own + 0.01 and own <= min(costs) * (1 + 1e-9)


def check_turn(
    turn: dict[str, Any],
    result: dict[str, Any],
    previous: dict[str, Any] | None,
    position: int,
    db_path: Path | None = None,
) -> dict[str, bool]:
    """Every check that applies to one turn, by name."""
    checks: dict[str, bool] = {}
    kind = answer_kind(result)
    spec, before = result.get("spec") or {}, (previous or {}).get("spec") or {}
    if "kind" in turn:
        checks["kind"] = kind == turn["kind"]
    if "yes_no" in turn:
        word = first_word(result["answer"])
        checks["yes_no"] = word in (YES if turn["yes_no"] == "yes" else NO)
    if "changed" in turn:
        diff = {name for name in set(spec) | set(before) if name != "language" and spec.get(name) != before.get(name)}
        checks["changed"] = diff == set(turn["changed"])
    if "top" in turn:
        checks["reranked"] = (
            bool(result.get("offers")) and db_path is not None and leads_the_listing(result, turn["top"], db_path)
        )
    if turn.get("not_rerun"):
        checks["not_rerun"] = not result.get("offers") and spec == before
    if "spec" in turn:
        checks["spec"] = _spec_matches(turn["spec"], spec)
    for pattern in turn.get("contains", []):
        checks["contains"] = checks.get("contains", True) and re.search(pattern, result["answer"]) is not None
    if turn.get("kind") == "recommendation" and result.get("offers"):
        checks["verdict_first"] = verdict_first(result)
    checks["clean"] = not any(re.search(p, result["answer"]) for p in UNCLEAN + turn.get("not_contains", []))
    limit_key = "follow_up_recommendation" if turn.get("kind") == "recommendation" and position else turn.get("kind")
    checks["length"] = len(wrapped_lines(result["answer"])) <= turn.get("max_lines", MAX_LINES.get(limit_key, 26))
    return checks


def evaluate(languages: tuple[str, ...] = LANGUAGES) -> dict[str, Any]:
    """Run every dialogue on a fresh advisor; per-check, per-language and per-dialogue results with the misses."""
    home = Path(tempfile.mkdtemp(prefix="gpu-advisor-conv-"))
    advisor = Advisor(checkpoint_path=home / "threads.sqlite", db_path=home / "catalog.sqlite")
    by_check: dict[str, list[bool]] = defaultdict(list)
    by_language: dict[str, list[bool]] = defaultdict(list)
    dialogues_ok: list[bool] = []
    misses: list[str] = []
    try:
        for language in languages:
            for dialogue in load_dialogues(language):
                thread, previous, all_ok = None, None, True
                for position, turn in enumerate(dialogue["turns"]):
                    try:
                        result = advisor.respond(turn["say"], thread_id=thread)
                        checks = check_turn(turn, result, previous, position, advisor.db_path)
                    except Exception as error:
                        result, checks = {"answer": f"crash: {error!r}"}, {"no_crash": False}
                    for name, ok in checks.items():
                        by_check[name].append(ok)
                        by_language[language].append(ok)
                        if not ok:
                            all_ok = False
                            misses.append(
                                f"{dialogue['id']} turn {position + 1} {name}: {turn['say']!r} -> "
                                f"{(result.get('answer') or '')[:100]!r}"
                            )
                    thread, previous = result.get("thread_id", thread), result
                dialogues_ok.append(all_ok)
    finally:
        advisor.close()
    flat = [ok for oks in by_check.values() for ok in oks]
    return {
        "score": sum(flat) / len(flat),
        "checks": len(flat),
        "passed": sum(flat),
        "dialogues": len(dialogues_ok),
        "dialogues_passed": sum(dialogues_ok),
        "by_check": {k: [sum(v), len(v)] for k, v in sorted(by_check.items())},
        "by_language": {k: [sum(v), len(v)] for k, v in by_language.items()},
        "misses": misses,
    }


def render(report: dict[str, Any], *, show_misses: bool = True) -> str:
    """The report as text."""
    lines = [
        (
            f"conversation checks: {report['passed']}/{report['checks']} = {100 * report['score']:.1f} %; "
            f"dialogues fully passed: {report['dialogues_passed']}/{report['dialogues']}"
        ),
        "by check:",
    ]
    lines += [f"  {name:14} {ok:3d}/{n:<3d} {100 * ok / n:6.1f} %" for name, (ok, n) in report["by_check"].items()]
    lines.append("by language:")
    lines += [f"  {name:14} {ok:3d}/{n:<3d} {100 * ok / n:6.1f} %" for name, (ok, n) in report["by_language"].items()]
    if show_misses and report["misses"]:
        lines.append("misses:")
        lines += [f"  {miss}" for miss in report["misses"]]
    lines.append("reproduce: .venv/bin/python -m evals.conversations")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the score (and the misses unless --quiet); --json prints the report as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quiet", action="store_true", help="do not list the misses")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    add_llm_flag(parser)
    args = parser.parse_args(argv)
    path = choose_path(args.llm)
    report = evaluate()
    print(
        json.dumps({"path": path, **report}, indent=2)
        if args.json
        else f"scored path: {path}\n" + render(report, show_misses=not args.quiet)
    )
    return 0
