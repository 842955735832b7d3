"""Light intent classifier for the graph: job request, follow-up change, FAQ question, out of scope, injection.

It reads the message and what the parser found in it (`mentioned` fields), plus whether the thread already has a
job. Injection cues win over everything, so an injected instruction never reaches the tools. Cue lists live in
`agent/lexicon/intent.json`.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Literal

from agent.lexicon import load

Intent = Literal["job_request", "follow_up", "faq", "out_of_scope", "injection"]
JOB_DEFINING = frozenset({"model", "params_b", "method"})
"""A message naming what to train (and how) describes a whole job, not a change to the current one."""


@cache
def _cue(name: str) -> re.Pattern[str]:
    """One compiled alternation per cue list."""
    return re.compile("|".join(f"(?:{p})" for p in load("intent.json")[name]), re.IGNORECASE)


def _has(name: str, text: str) -> bool:
    """Whether a cue list matches somewhere in the text (word-bounded)."""
    return _cue(name).search(text) is not None


def _asks(text: str) -> bool:
    """Whether the text is a question (question mark or a question cue)."""
    return text.rstrip().endswith("?") or _has("question", text)


def _domain(text: str) -> bool:
    """Whether the text talks about GPUs, training or cloud rental at all."""
    return re.search(r"(?<![\w])(?:" + _cue("domain").pattern + r")(?![\w])", text, re.IGNORECASE) is not None


def classify_intent(text: str, mentioned: list[str] | set[str], *, has_current_job: bool = False) -> Intent:
    """Classify one message; `mentioned` are the JobSpec fields the parser read from it."""
    text = (text or "").strip()
    fields = set(mentioned)
    if _has("injection", text):
        return "injection"
    job_sized = len(fields - {"method"}) >= 1 and bool(fields & JOB_DEFINING) or len(fields) >= 3
    if not has_current_job and fields and not fields & JOB_DEFINING and _asks(text) and not _has("follow_up", text):
        # "can I use spot?" with no job to apply it to is a question about spot, not a job request.
        return "faq" if _domain(text) else "out_of_scope"
    if _has("faq", text) and not job_sized and not (has_current_job and _has("follow_up", text)):
        return "faq" if _domain(text) or fields else "out_of_scope"
    if fields:
        if not has_current_job:
            return "job_request"
        if fields >= {"method"} and fields & {"model", "params_b"} and not _has("follow_up", text):
            return "job_request"
        return "follow_up"
    if _domain(text):
        return "faq"
    return "out_of_scope"
