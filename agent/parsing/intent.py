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


def asks_to_act_for_user(text: str) -> bool:
    """Whether the message offers keys or logins, or asks the assistant to act on the user's account ("log into my
    cloud account", "I'll paste my API key", "lancialo tu", "login ke akun saya"): what it never does."""
    return _word_cue("credentials", text)


def _asks(text: str) -> bool:
    """Whether the text is a question (question mark or a question cue)."""
    return text.rstrip().endswith("?") or _has("question", text)


def _domain(text: str) -> bool:
    """Whether the text talks about GPUs, training or cloud rental at all."""
    return _word_cue("domain", text)


def _about_the_plan(text: str) -> bool:
    """Whether the text names the plan or its parts (its total, its offer, the recommendation): inside a job thread a
    question about them is not off-topic, though they are no domain words elsewhere."""
    return _word_cue("plan_words", text)


def classify_intent(text: str, mentioned: list[str] | set[str], *, has_current_job: bool = False) -> Intent:
    """Classify one message; `mentioned` are the JobSpec fields the parser read from it."""
    text = (text or "").strip()
    fields = set(mentioned)
    if _has("injection", text):
        return "injection"
    relevant = _domain(text) or (has_current_job and _about_the_plan(text))
    job_sized = (len(fields - {"method"}) >= 1 and bool(fields & JOB_DEFINING)) or len(fields) >= 3
    if not has_current_job and fields and not fields & JOB_DEFINING and _asks(text) and not _has("follow_up", text):
        # "can I use spot?" with no job to apply it to is a question about spot, not a job request.
        return "faq" if relevant else "out_of_scope"
    if _has("faq", text) and not job_sized and not (has_current_job and _has("follow_up", text)):
        return "faq" if relevant or fields else "out_of_scope"
    if fields:
        if not has_current_job:
            return "job_request"
        if fields >= {"method"} and fields & {"model", "params_b"} and not _has("follow_up", text):
            return "job_request"
        return "follow_up"
    if relevant:
        return "faq"
    return "out_of_scope"


TurnRequest = Literal["plain", "prefer_speed", "prefer_cost", "feasibility", "compare_count", "spot_delta", "off_topic"]
HARDWARE_FIELDS = frozenset({"gpu", "num_gpus", "gpu_memory_gb"})
PLACE_AND_TIME = frozenset({"deadline_hours", "regions", "providers"})
"""Fields a chat about something else can trip ("tomorrow", "in Jakarta"): alone they do not make a job message."""
"""Fields that state the hardware a feasibility question is about."""


def _word_cue(name: str, text: str) -> bool:
    """Whether a cue list matches as whole words."""
    return re.search(r"(?<![\w])(?:" + _cue(name).pattern + r")(?![\w])", text, re.IGNORECASE) is not None


def preference_of(text: str) -> str | None:
    """'speed' or 'cost' when the message asks for the faster or the cheaper offer ("faster?", "più economico?")."""
    speed, cost = _word_cue("prefer_speed", text), _word_cue("prefer_cost", text)
    if speed != cost:
        return "speed" if speed else "cost"
    return None


def asks_both_ends(text: str) -> bool:
    """Whether the message asks for the cheaper and the faster offer at once ("which is cheapest and which is
    fastest?"): a question about both, not a preference."""
    return _word_cue("prefer_speed", text) and _word_cue("prefer_cost", text)


def _asks_fit_first(text: str) -> bool:
    """A sentence that ends with "?" asks whether the job fits, with context after it ("... basta per QLoRA? Sono
    5000 esempi."); a fit word in a statement after another question is no fit question."""
    return any(
        sentence.endswith("?") and _word_cue("feasibility", sentence) for sentence in re.split(r"(?<=[.!?])\s+", text)
    )


def turn_request(
    text: str, mentioned: list[str] | set[str], *, has_current_job: bool, last_kind: str | None = None
) -> TurnRequest:
    """What a job-thread message asks for beyond its fields: a preference, a yes/no feasibility question, a
    comparison of GPU counts, the spot delta, or nothing job-related at all (off-topic)."""
    text = (text or "").strip()
    fields = set(mentioned)
    asks = (
        text.endswith("?")
        or re.match(r"(?:" + _cue("feasibility").pattern + r")(?![\w])", text, re.IGNORECASE) is not None
        or _asks_fit_first(text)
    )
    if (
        has_current_job
        and not _domain(text)
        and not fields & JOB_DEFINING
        and preference_of(text) is None  # "yang lebih murah apa?" asks for the cheaper offer: never off-topic
        and not asks_both_ends(text)
        and (
            (  # "also, which hotel?"; "we have 100k news articles" sizes the job whatever it counts
                _word_cue("off_topic", text)
                and (not fields or (fields <= PLACE_AND_TIME and not _has("follow_up", text)))
            )
            or (
                fields <= PLACE_AND_TIME
                and not _has("follow_up", text)
                and not _about_the_plan(text)  # "what is the total?" asks about the plan
                and _word_cue("wh_question", text)
                and text.rstrip().endswith("?")
            )
        )
    ):
        return "off_topic"  # "What's the weather in Rome tomorrow?" is neither a deadline nor a region
    if has_current_job and fields == {"num_gpus"} and _word_cue("compare", text) and asks:
        return "compare_count"
    if has_current_job and fields == {"interruptible_ok"}:
        return "spot_delta"
    if (
        _word_cue("feasibility", text)
        and asks
        and (fields & HARDWARE_FIELDS or (has_current_job and last_kind == "yes_no" and fields))
    ):
        return "feasibility"
    if has_current_job and last_kind == "yes_no" and fields and text.rstrip().endswith("?"):
        return "feasibility"  # "and with QLoRA?" after a yes/no answer asks the same question again
    preference = preference_of(text)
    if preference and not fields - {"interruptible_ok"}:
        return "prefer_speed" if preference == "speed" else "prefer_cost"
    return "plain"
