"""Turns that give half of a setting, or its other half (agent.parsing.focus reads the words): "the number of epochs I
gave is wrong" asks for the value, "if I raise the batch size, how long?" asks which value to try, "16" alone asks which
setting it is; the next turn's bare number (or setting name) completes it. A setting scaled by a factor ("10x the
data", "raddoppia le epoche") is read here too: a what-if when asked, a change when said. The act of every other turn
is agent.graph.acts'."""

from __future__ import annotations

from typing import Any

from agent.graph.acts.classify import is_question, question_topic
from agent.graph.acts.clearing import clears
from agent.graph.acts.cues import before_closing_question, has, sentences
from agent.parsing import lone_number, named_field, number_said_alone, says_number, scaled

FOCUS_STEP = {
    "intent": "follow_up",
    "request": "plain",
    "act_clears": [],
    "act_drops": [],
    "act_currency": None,
    "act_gpus": [],
    "act_count": None,
}
"""What a focus turn sets besides its act and topic (a turn about the job; nothing cleared, dropped or named)."""


def focus_update(state: dict[str, Any], text: str, gpus: tuple[str, ...]) -> dict[str, Any] | None:
    """The act of a turn that gives half of a setting, or the other half of the one the last turn left open
    (agent.parsing.focus): a field named without its value, with a claim that it is wrong, asks for the value; one
    asked about in a condition ("if I add epochs, how much?") asks which value to try; a lone number after a
    what-if's question is that what-if; a setting scaled by a factor is that value. None for any other turn."""
    language, focus, mentioned = state["language"], state.get("focus") or {}, state.get("mentioned") or []
    if focus.get("mode") == "what_if" and focus["field"] in mentioned and lone_number(text, language) is not None:
        return FOCUS_STEP | {"act": "what_if", "act_topic": focus.get("topic") or "plain"}  # "2" after "more epochs?"
    relative = scaled(text, language, state.get("spec") or {})
    if relative and not set(mentioned) - set(relative):  # "10 times the data", "raddoppia le epoche"
        return FOCUS_STEP | _relative_act(state, text, gpus) | {"parsed": relative, "mentioned": list(relative)}
    field = named_field(text, language)
    if clears(text, language) or field in mentioned:
        return None
    claim = before_closing_question(text) or "" if is_question(text, language) else text  # "is it wrong?" asks
    wrong = any(  # the claim and the field in one clause: "sorry, wrong chat. How long ...?" corrects nothing
        has("wrong_value", clause, language) and named_field(clause, language) == field
        for clause in sentences(claim, colon=True)
    )
    if field and wrong and not mentioned and not says_number(text, language) and not has("undo", text, language):
        return FOCUS_STEP | {"act": "ask_back", "act_topic": "focus", "focus": {"field": field, "mode": "change"}}
    if (
        field
        and (mentioned or not says_number(text, language))  # the numbers said are the other settings'
        and is_question(text, language)
        and any(has(c, text, language) for c in ("condition", "hypothetical"))
        and has("adjust", text, language)  # "if I add epochs", not "with the same budget"
        and not has("inverse", text, language)  # "with that budget, the largest model?"
    ):
        asked = {"field": field, "mode": "what_if", "topic": _what_if_topic(text, language, gpus)}
        with_ = {name: value for name, value in (state.get("parsed") or {}).items() if name in mentioned}
        return FOCUS_STEP | {
            "act": "what_if",
            "act_topic": "focus",
            "focus": asked | {"with": with_},
        }  # "... on an L4?"
    return None


def _relative_act(state: dict[str, Any], text: str, gpus: tuple[str, ...]) -> dict[str, Any]:
    """The act of a message that scales a setting: a what-if when it asks ("e se le epoche raddoppiassero?"), about
    what its question names (cost, time, fit), else a change ("double the epochs")."""
    language = state["language"]
    asking = is_question(text, language) or any(has(c, text, language) for c in ("condition", "hypothetical"))
    if not asking:
        return {"act": "change", "act_topic": "plain"}
    return {"act": "what_if", "act_topic": _what_if_topic(text, language, gpus)}


def _what_if_topic(text: str, language: str, gpus: tuple[str, ...]) -> str:
    """What a what-if's question asks of the plan it proposes: fit, cost, duration, or the plan itself (plain)."""
    topic = question_topic(text, language, set(), gpus)
    topic = "fit" if has("fit", text, language) or topic == "memory" else topic
    return topic if topic in ("fit", "cost", "duration") else "plain"


def number_alone(state: dict[str, Any], text: str) -> dict[str, Any] | None:
    """A number said alone that no reading takes ("16"): ask which setting it is (the next turn's field name takes
    it, agent.parsing.focus); None otherwise."""
    language = state["language"]
    written = number_said_alone(text, language)
    if written is None or state.get("mentioned") or named_field(text, language) or clears(text, language):
        return None
    return FOCUS_STEP | {"act": "ask_back", "act_topic": "focus", "focus": {"value": written}}
