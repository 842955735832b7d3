"""Offline vs LLM on the blind dialogue set: is every turn the offline path answers answered at least as well with
an LLM configured, when that LLM answers like a very small model?

Each dialogue of evals/dialogues_blind runs twice on fresh advisors: offline (OPENAI_* cleared), then with the LLM
configured and pointed at `replay.py`'s local server (real HTTP, the real openai client), which answers every
request with a real-model-like output class (prose instead of JSON, invented numbers, a paragraph about "the
company", another language, changed numbers, a flipped verdict, a cut-off text, plain text instead of tool calls,
and the faithful draft). Scored independently of the product:
- the blind set's own checks per turn (`evals.dialogues_blind.runner.check_turn`), offline vs LLM;
- turns answered worse (fewer checks passed with the LLM than offline): the goal is 0;
- hostile text shown: a non-faithful reply that is the whole answer (half the draft, cut by the length limit), or a
  sentence of one (a sentence the draft it was asked to reword does not contain) in the answer;
- turns with more than one LLM note.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from evals.dialogues_blind.runner import LANGUAGES, SPLITS, _job, check_turn, load
from evals.llm_vs_offline.replay import running

REPRODUCE = "PYTHONPATH=. .venv/bin/python -m evals.llm_vs_offline [--split tune|heldout] [--misses]"
LLM_ENV = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "GPU_ADVISOR_MODEL", "GPU_ADVISOR_OFFLINE")


def _sentences(text: str) -> list[str]:
    """The sentences of a reply long enough to be recognised in an answer."""
    parts = re.split(r"(?<=[.!?])\s+|\n+", text or "")
    return [part.strip(" -*") for part in parts if len(part.strip(" -*")) >= 12]


def shown_sentences(replies: list[tuple[str, str, str, str]], answer: str) -> list[str]:
    """Sentences of non-faithful replies that the user sees and that the draft the reply was asked to reword (the
    tool-written text) does not hold."""
    seen = []
    for kind, klass, text, draft in replies:
        if klass == "faithful" or kind == "parse":
            continue
        if text.strip() and text.strip() != draft.strip() and answer.strip() == text.strip():
            seen.append(f"[the whole {klass} reply is the answer]")  # e.g. half the draft, cut by the length limit
        seen += [s for s in _sentences(text) if s not in draft and s in answer]
    return seen


def run_dialogues(dialogues: list[dict[str, Any]], server: Any = None) -> list[list[dict[str, Any]]]:
    """Every dialogue on a fresh advisor; per turn the result, its checks and (with a server) the replies it got."""
    from agent.llm import client as llm
    from agent.service import Advisor

    home = Path(tempfile.mkdtemp(prefix="gpu-advisor-llm-vs-offline-"))
    advisor = Advisor(checkpoint_path=home / "threads.sqlite", db_path=home / "catalog.sqlite")
    out = []
    try:
        for dialogue in dialogues:
            thread, before, turns = None, {}, []
            for turn in dialogue["turns"]:
                llm.breaker.reset()  # a content failure never opens it; reset so one dialogue cannot skew the next
                first = len(server.log) if server else 0
                try:
                    result = advisor.respond(turn["say"], thread_id=thread)
                    checks = check_turn(turn, result, before, dialogue["language"])
                except Exception as error:
                    result, checks = {"answer": f"crash: {error!r}", "notes": []}, {"no_crash": False}
                turns.append(
                    {"result": result, "checks": checks, "replies": list(server.log[first:]) if server else []}
                )
                thread, before = result.get("thread_id", thread), _job(result.get("spec")) or before
            out.append(turns)
    finally:
        advisor.close()
    return out


def compare(
    dialogues: list[dict[str, Any]], offline: list[list[dict[str, Any]]], online: list[list[dict[str, Any]]]
) -> dict[str, Any]:
    """The figures of one split."""
    tally: Counter[str] = Counter()
    classes: Counter[str] = Counter()
    shown_by_class: Counter[str] = Counter()
    misses: list[str] = []
    for dialogue, off_turns, on_turns in zip(dialogues, offline, online, strict=True):
        for index, (turn, off, on) in enumerate(zip(dialogue["turns"], off_turns, on_turns, strict=True)):
            off_ok, on_ok = sum(off["checks"].values()), sum(on["checks"].values())
            tally["turns"] += 1
            tally["checks"] += len(off["checks"])
            tally["offline_passed"] += off_ok
            tally["llm_checks"] += len(on["checks"])
            tally["llm_passed"] += on_ok
            where = f"{dialogue['id']} t{index + 1} {turn['say']!r}"
            if on_ok < off_ok:
                tally["worse"] += 1
                lost = [name for name, ok in off["checks"].items() if ok and not on["checks"].get(name)]
                misses.append(f"worse: {where}: lost {lost}; replies {[c for _, c, _, _ in on['replies']]}")
            elif on_ok > off_ok:
                tally["better"] += 1
            off_answer, on_answer = off["result"].get("answer") or "", on["result"].get("answer") or ""
            if on_answer != off_answer:
                tally["answer_differs"] += 1
            for kind, klass, _, _ in on["replies"]:
                classes[f"{kind}:{klass}"] += 1
                if klass != "faithful" and kind != "parse":
                    tally["hostile_replies"] += 1
            shown = shown_sentences(on["replies"], on_answer)
            if shown:
                tally["hostile_shown_turns"] += 1
                for _, klass, _, _ in on["replies"]:
                    shown_by_class[klass] += 1
                misses.append(f"shown: {where}: {shown[:2]}")
            extra = [n for n in on["result"].get("notes") or [] if n not in (off["result"].get("notes") or [])]
            if len(extra) > 1:
                tally["notes_more_than_one"] += 1
                misses.append(f"notes: {where}: {extra}")
            if _job(on["result"].get("spec")) != _job(off["result"].get("spec")):
                tally["job_differs"] += 1
    return {**tally, "classes": dict(sorted(classes.items())), "shown_by_class": dict(shown_by_class), "misses": misses}


def evaluate(splits: tuple[str, ...] = SPLITS) -> dict[str, Any]:
    """Both paths on every dialogue of the splits; the figures by split."""
    saved = {name: os.environ.get(name) for name in LLM_ENV}
    report = {}
    try:
        with running() as server:
            for split in splits:
                dialogues = [d for language in LANGUAGES for d in load(split, language)]
                for name in LLM_ENV:
                    os.environ.pop(name, None)
                offline = run_dialogues(dialogues)
                os.environ.update(
                    OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="replay", GPU_ADVISOR_MODEL="smollm2-135m-replay"
                )
                online = run_dialogues(dialogues, server)
                report[split] = compare(dialogues, offline, online)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return report


def render(report: dict[str, Any], *, misses: bool) -> str:
    """The figures as text."""
    lines = ["scored paths: offline (OPENAI_* cleared) vs LLM (a local server replaying small-model outputs)"]
    for split, r in report.items():
        lines += [
            (
                f"[{split}] turns {r['turns']}: checks offline {r['offline_passed']}/{r['checks']}, "
                f"with the LLM {r['llm_passed']}/{r['llm_checks']}; turns worse with the LLM {r.get('worse', 0)}, "
                f"better {r.get('better', 0)}"
            ),
            (
                f"  hostile text shown in {r.get('hostile_shown_turns', 0)} turns "
                f"({r.get('hostile_replies', 0)} hostile phrasing/tool replies sent); turns with more than one "
                f"LLM note {r.get('notes_more_than_one', 0)}; answer differs from offline in "
                f"{r.get('answer_differs', 0)} turns, job in {r.get('job_differs', 0)}"
            ),
            "  replies by class: " + ", ".join(f"{k} {v}" for k, v in r["classes"].items()),
        ]
        if misses:
            lines += [f"  {m}" for m in r["misses"]]
    lines.append(f"reproduce: {REPRODUCE}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--split", choices=SPLITS, action="append", help="split(s) to run (default: both)")
    parser.add_argument("--misses", action="store_true", help="list worse turns, shown text and repeated notes")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    report = evaluate(tuple(args.split or SPLITS))
    print(json.dumps(report, indent=2, ensure_ascii=False) if args.json else render(report, misses=args.misses))
    return 0
