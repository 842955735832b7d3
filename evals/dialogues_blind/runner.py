"""Score the blind dialogue set: dialogues written by a helper who read only the README's user-facing sections.

Rows live in dialogues_<split>.<lang>.jsonl (split: tune or heldout; see PROMPT.md for how they were written and
RESULTS.md for the scores). Each turn names the dialogue act it is (new_job, change, undo, question, what_if,
inverse, faq, declined, ask_back) and may carry: job "unchanged", spec (fields after the turn), changed (fields
this turn changes, exactly), yes_no, mentions (regexes the answer must match). Every turn is also checked for its
language (the answer's language is the dialogue's, or the one a turn's spec switches to) and for a clean answer (no traceback, no crash). Score = checks
passed / checks made. The act is read from the result's `act`; results of older code without one are mapped from
their intent and answer kind (see `act_of`), so the first run could be scored on the code before acts existed.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from evals.conversations.runner import first_word
from evals.scored_path import add_llm_flag, choose_path

HERE = Path(__file__).parent
LANGUAGES = ("it", "id", "en")
SPLITS = (
    "tune",
    "heldout",
    "followups_tune",
    "followups_heldout",
    "questions_tune",
    "questions_heldout",
    "messy_tune",
    "messy_heldout",
    "expert_tune",
    "expert_heldout",
    "tradeoffs_tune",
    "tradeoffs_heldout",
    "hardware_tune",
    "hardware_heldout",
    "money_tune",
    "money_heldout",
    "shifts_tune",
    "shifts_heldout",
    "newcomers_tune",
    "newcomers_heldout",
    "refs_tune",
    "refs_heldout",
    "mixed_tune",
    "mixed_heldout",
    "spot_tune",
    "spot_heldout",
    "where_tune",
    "where_heldout",
    "long_tune",
    "long_heldout",
    "widget_tune",
    "widget_heldout",
)
YES = {"yes", "sì", "si", "ya", "bisa", "cukup", "basta", "muat"}
NO = {"no", "tidak", "non", "nope", "gak", "nggak"}
UNCLEAN = (r"Traceback", r"crash:", r"internal error")
OLD_KIND_ACT = {
    "declined": "declined",
    "faq": "faq",
    "ask_back": "ask_back",
    "yes_no": "what_if",
    "delta": "what_if",
    "compare": "what_if",
}


def load(split: str, language: str) -> list[dict[str, Any]]:
    """The dialogues of one split and language (empty when the file is absent)."""
    path = HERE / f"dialogues_{split}.{language}.jsonl"
    if not path.exists():
        return []
    return [
        json.loads(line) | {"language": language, "split": split}
        for line in path.read_text("utf-8").splitlines()
        if line.strip()
    ]


def act_of(result: dict[str, Any]) -> str | None:
    """The turn's act: the result's own `act`, else mapped from an older result's intent and answer kind."""
    if result.get("act"):
        return str(result["act"])
    kind = (result.get("verdict") or {}).get("answer_kind")
    if kind in OLD_KIND_ACT:
        return OLD_KIND_ACT[kind]
    intent = result.get("intent")
    if intent == "job_request":
        return "new_job"
    if intent == "follow_up":
        return "change" if result.get("changed") else "question"
    return {"out_of_scope": "declined", "injection": "declined", "unsupported": "declined"}.get(intent or "", intent)


def _same(want: Any, got: Any) -> bool:
    """Expected field equality: numbers within 0.1 %, budgets by amount and currency, lists as sets."""
    if isinstance(want, dict) and isinstance(got, dict):
        return all(_same(v, got.get(k)) for k, v in want.items())
    if isinstance(want, list) and isinstance(got, list):
        return sorted(map(str, want)) == sorted(map(str, got))
    if isinstance(want, (int, float)) and not isinstance(want, bool) and isinstance(got, (int, float)):
        return abs(got - want) <= 1e-3 * max(1.0, abs(want))
    return bool(want == got)


def _job(spec: dict[str, Any] | None) -> dict[str, Any]:
    """The job fields of a spec (the reply language is not part of the job)."""
    return {k: v for k, v in (spec or {}).items() if k != "language" and v is not None}


def spoken_language(turn: dict[str, Any], current: str) -> str:
    """The language a turn's answer must be in: the one its row's spec names when the user switches language
    mid-dialogue (kept for the turns after it), else the one spoken so far."""
    return str((turn.get("spec") or {}).get("language") or current)


def check_turn(turn: dict[str, Any], result: dict[str, Any], before: dict[str, Any], language: str) -> dict[str, bool]:
    """Every check that applies to one turn, by name."""
    answer = result.get("answer") or ""
    spec = _job(result.get("spec"))
    checks = {
        "act": act_of(result) == turn["act"],
        "language": result.get("language") == language,
        "clean": bool(answer.strip()) and not any(re.search(p, answer) for p in UNCLEAN),
    }
    if turn.get("job") == "unchanged":
        checks["unchanged"] = spec == before
    if "spec" in turn:
        wanted = {name: value for name, value in turn["spec"].items() if name != "language"}  # the language check's
        checks["spec"] = all(_same(value, spec.get(name)) for name, value in wanted.items())
    if "changed" in turn:
        diff = {name for name in set(spec) | set(before) if spec.get(name) != before.get(name)}
        checks["changed"] = diff == set(turn["changed"])
    if "yes_no" in turn:
        checks["yes_no"] = first_word(answer) in (YES if turn["yes_no"] == "yes" else NO)
    if turn.get("mentions"):
        checks["mentions"] = all(re.search(p, answer, re.IGNORECASE) for p in turn["mentions"])
    return checks


def evaluate(splits: tuple[str, ...] = SPLITS) -> dict[str, Any]:
    """Run every dialogue of the splits on a fresh offline advisor; scores by split, check, act and language."""
    from agent.service import Advisor

    home = Path(tempfile.mkdtemp(prefix="gpu-advisor-blind-"))
    advisor = Advisor(checkpoint_path=home / "threads.sqlite", db_path=home / "catalog.sqlite")
    tallies: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    dialogues: dict[str, list[bool]] = defaultdict(list)
    misses: dict[str, list[str]] = defaultdict(list)
    try:
        for split in splits:
            for language in LANGUAGES:
                for dialogue in load(split, language):
                    thread, before, ok_all, speaking = None, {}, True, language
                    for position, turn in enumerate(dialogue["turns"]):
                        speaking = spoken_language(turn, speaking)
                        try:
                            result = advisor.respond(turn["say"], thread_id=thread)
                            checks = check_turn(turn, result, before, speaking)
                        except Exception as error:
                            result, checks = {"answer": f"crash: {error!r}"}, {"no_crash": False}
                        for name, ok in checks.items():
                            for group in (f"check:{name}", f"act:{turn['act']}", f"lang:{language}", "all"):
                                tallies[split][group].append(ok)
                            if not ok:
                                ok_all = False
                                misses[split].append(
                                    f"{dialogue['id']} t{position + 1} {name} (want {turn['act']}, got "
                                    f"{act_of(result)}): {turn['say']!r} -> {(result.get('answer') or '')[:90]!r}"
                                )
                        thread, before = result.get("thread_id", thread), _job(result.get("spec")) or before
                    dialogues[split].append(ok_all)
    finally:
        advisor.close()
    return {
        split: {
            "passed": sum(tallies[split]["all"]),
            "checks": len(tallies[split]["all"]),
            "dialogues": len(dialogues[split]),
            "dialogues_passed": sum(dialogues[split]),
            "groups": {g: [sum(v), len(v)] for g, v in sorted(tallies[split].items())},
            "misses": misses[split],
        }
        for split in splits
    }


def render(report: dict[str, Any], *, show_misses: tuple[str, ...]) -> str:
    """The report as text (misses only for the splits in `show_misses`)."""
    lines = []
    for split, r in report.items():
        share = 100 * r["passed"] / r["checks"] if r["checks"] else 0.0
        lines.append(
            f"[{split}] checks {r['passed']}/{r['checks']} = {share:.1f} %; dialogues fully passed "
            f"{r['dialogues_passed']}/{r['dialogues']}"
        )
        lines += [f"  {g:22} {ok:3d}/{n:<3d} {100 * ok / n:6.1f} %" for g, (ok, n) in r["groups"].items() if g != "all"]
        if split in show_misses:
            lines += [f"  miss: {m}" for m in r["misses"]]
    lines.append("reproduce: .venv/bin/python -m evals.dialogues_blind [--split tune|heldout] [--misses tune]")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the scores; misses are listed only for the splits named by --misses (never held-out by default)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--split", choices=SPLITS, action="append", help="split(s) to run (default: both)")
    parser.add_argument("--misses", choices=SPLITS, action="append", default=[], help="list this split's misses")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    add_llm_flag(parser)
    args = parser.parse_args(argv)
    path = choose_path(args.llm)
    report = evaluate(tuple(args.split or SPLITS))
    print(
        json.dumps({"path": path, **report}, indent=2)
        if args.json
        else f"scored path: {path}\n" + render(report, show_misses=tuple(args.misses))
    )
    return 0
