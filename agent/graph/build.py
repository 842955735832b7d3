"""The advisor's LangGraph graph: one chat turn from a message to a grounded answer, nodes top to bottom.

language -> parse -> intent -> (refuse | unsupported | faq | merge) ; merge -> (ask_back | estimate) ;
estimate -> rank (topology per offer inside the ranking) -> layout (topology and memory of the chosen offer)
-> retrieve (FAQ entries that back the advice) -> write.

Inside a job thread the intent node also reads what the turn asks beyond its fields (agent.parsing.intent.turn_request):
a preference ("faster?") re-ranks, a feasibility question ("will it fit on my 24 GB card?") gets a yes/no from
the estimator, "2 GPUs better?" compares without changing the job, "what if spot?" answers the delta, and an
off-topic question is declined without re-running anything.

Every node returns plain dicts (pydantic models dumped), so the SQLite checkpointer stores JSON-ready state. The
next turn reads `spec`, `language`, `preference`, `last_top` and `last_kind`; the first node clears the rest.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.types import Command

from agent import writing
from agent.faq_answer import answer_question
from agent.graph import acts
from agent.graph.job_nodes import (
    ask_back_node,
    estimate_node,
    layout_node,
    merge_node,
    rank_node,
    retrieve_node,
    route_missing,
    write_node,
)
from agent.graph.state import AgentState
from agent.language import detect_language, untangled
from agent.parsing import (
    JOB_DEFINING,
    against_the_job,
    classify_intent,
    focused,
    parse_message,
    preference_of,
    turn_request,
)
from agent.stream_events import progress as _progress
from agent.tool_agent import tools_node, with_tools
from agent.writing import verdict
from contract.jobspec import JobSpec

PER_TURN_RESET: dict[str, Any] = {
    "intent": None,
    "parsed": {},
    "mentioned": [],
    "missing": [],
    "estimate": None,
    "single_gpu_estimate": None,
    "topology": None,
    "ranking": None,
    "citations": [],
    "assumption_lines": [],
    "answer": "",
    "notes": [],
    "parser": "offline",
    "fallback_reason": None,
    "request": "plain",
    "answer_kind": None,
    "changed": [],
    "verdict": None,
    "feasibility": None,
    "comparison": None,
    "compare_gpus": None,
    "preference_changed": False,
    "preference_before": None,
    "parsed_unknown_model": None,
    "clarify": None,
    "act": None,
    "act_topic": None,
    "act_clears": [],
    "act_currency": None,
    "act_gpus": [],
    "act_count": None,
    "act_target": None,
    "act_drops": [],
    "act_listed": None,
    "restored": False,
    "undo_missing": False,
    "adopt_missing": False,
    "replaced_top": None,
    "default_method": None,
    "model_guess": None,
}
AFTER_READ = ("tools", END)
"""Where the read step can send a turn: the LLM's tool loop, or (its act run as a leg) the end."""
log = logging.getLogger(__name__)


def language_node(state: AgentState) -> dict[str, Any]:
    """Pick the reply language: explicit choice, else detection, else the previous turn's; reset per-turn fields; the
    message as later steps read it (swapped-letter typos of words they listen for untangled)."""
    text = state.get("message") or ""
    previous = state.get("language")
    guess = detect_language(text, explicit=state.get("explicit_language"), previous=previous)
    _progress("language", guess.language)
    supported = guess.supported or not text.strip()
    reset = PER_TURN_RESET | {"language": guess.language, "supported": supported}
    read = untangled(text)  # "waht about an a10g": what every later step reads
    return reset | {"message": read} if read != text else reset


def parse_node(state: AgentState) -> dict[str, Any]:
    """Read the JobSpec fields this message states (offline parser, or the LLM with offline fallback)."""
    language = state["language"]
    _progress("parse", language)
    if state.get("changes") or not (state.get("message") or "").strip():
        changes = dict(state.get("changes") or {})  # a button press: re-run the current job, maybe changed
        return {"parsed": changes, "mentioned": list(changes)}
    result = parse_message(state.get("message") or "", lang=language)
    parsed = {name: getattr(result.spec, name) for name in result.mentioned}
    history = state.get("history") or []
    replaced = history[-1].get("spec") if history else None  # the plan the thread's last change replaced
    text, spec = state.get("message") or "", state.get("spec") or {}
    # the number (or the field) the last turn asked for or left open comes first, then what the job reads into it
    filled = {} if parsed else focused(text, language, state.get("focus"), spec)
    parsed = filled or against_the_job(text, parsed, spec, state.get("pending"), result.example_tokens, replaced)
    notes = [writing.fixed_text("llm_fallback_note", language)] if result.fallback_reason else []
    notes += writing.refused_values(result.refused, language)
    if result.text_bytes and "dataset_tokens" in parsed:  # "2 GB of text": how many tokens that was taken to be
        notes.append(writing.text_size_note(result.text_bytes, parsed["dataset_tokens"], language))
    return {
        "parsed": JobSpec.model_validate({"language": language, **parsed}).model_dump(mode="json", include=set(parsed)),
        "mentioned": list(dict.fromkeys(name for name in [*result.mentioned, *parsed] if name in parsed)),
        "parser": result.parser,
        "fallback_reason": result.fallback_reason,
        "notes": notes,
        "parsed_unknown_model": result.unknown_model,
        "clarify": result.clarify,
        "model_guess": getattr(result, "model_guess", None),
    }


def intent_node(state: AgentState) -> dict[str, Any]:
    """Classify the turn (new job, change, FAQ, off-topic, injection) and what it asks of the current job."""
    if not state.get("supported", True):
        return {"intent": "unsupported"}
    has_job = bool(state.get("spec"))
    if state.get("changes") or not (state.get("message") or "").strip():
        intent = "follow_up" if has_job else "job_request"
        return {"intent": intent, "act": "change" if has_job else "new_job", "act_topic": "plain"} | _preference(
            state, state.get("prefer"), new_job=intent == "job_request"
        )
    text, mentioned = state.get("message") or "", state.get("mentioned") or []
    intent = classify_intent(text, mentioned, has_current_job=has_job)
    if intent == "job_request" and state.get("awaiting_fields"):
        intent = "follow_up"  # the answer to our ask-back completes the pending job
    request = turn_request(text, mentioned, has_current_job=has_job, last_kind=state.get("last_kind"))
    if intent == "injection" or (
        request == "spot_delta" and (state.get("parsed") or {}).get("interruptible_ok") is False
    ):
        request = "plain"  # "no spot" is a change to re-rank, not a question about what spot would save
    elif request == "off_topic":
        intent = "out_of_scope"
    elif request in ("prefer_speed", "prefer_cost", "compare_count", "spot_delta") and has_job:
        intent = "follow_up"
    elif request == "feasibility" and intent in ("faq", "out_of_scope"):
        intent = "follow_up" if has_job and not set(mentioned) & JOB_DEFINING else "job_request"
    wished = state.get("prefer") or preference_of(text) if intent in ("job_request", "follow_up") else None
    act = acts.act_update(state, intent, request, wished)
    intent, request = act.get("intent", intent), act.get("request", request)
    wished = state.get("prefer") if act["act"] in acts.PLAN_ACTS or act["act"] == "undo" else wished
    return {"intent": intent, "request": request} | act | _preference(state, wished, new_job=intent == "job_request")


def _preference(state: AgentState, wished: str | None, *, new_job: bool) -> dict[str, Any]:
    """The thread's offer preference after this turn, whether the turn changed it, and the one before it (what a
    plan this turn replaces was shown with)."""
    before = None if new_job else state.get("preference")
    after = wished or before
    return {
        "preference": after,
        "preference_changed": after != state.get("preference") and not new_job,
        "preference_before": state.get("preference"),
    }


def route_intent(state: AgentState) -> str:
    """Where the turn goes after intent classification."""
    return {"unsupported": "unsupported", "injection": "refuse", "out_of_scope": "refuse", "faq": "faq"}.get(
        state["intent"], "merge"
    )


def refuse_node(state: AgentState) -> dict[str, Any]:
    """A short refusal in the user's language; nothing reaches the tools."""
    key = "refuse_injection" if state["intent"] == "injection" else "out_of_scope"
    if state.get("act_topic") == "credentials":
        key = "refuse_credentials"
    return {
        "answer": writing.fixed_text(key, state["language"]),
        "answer_kind": "declined",
        "verdict": verdict("declined"),
    }


def unsupported_node(state: AgentState) -> dict[str, Any]:
    """A polite English answer naming the supported languages."""
    return {
        "language": "en",
        "answer": writing.fixed_text("unsupported_language", "en"),
        "answer_kind": "declined",
        "verdict": verdict("declined"),
    }


def faq_node(state: AgentState) -> dict[str, Any]:
    """Answer a plain question from the knowledge base, cited."""
    _progress("faq", state["language"])
    result = answer_question(state.get("message") or "", lang=state["language"])
    return {
        "answer": result.answer,
        "citations": [c.model_dump() for c in result.citations],
        "answer_kind": "faq",
        "verdict": verdict("faq"),
    }


def in_order(*steps: Callable[[AgentState], dict[str, Any]]) -> Callable[[AgentState], dict[str, Any]]:
    """One graph node that runs `steps` in turn, each seeing the state as the ones before it left it, and returns
    their updates merged (every channel keeps its last value, so this equals one node per step). Each LangGraph step
    costs ~0.25-0.5 ms of bookkeeping (task config, callbacks, checkpoint copies); a new job runs 1 step instead of
    9 (issues 14 and 27). Progress events still come from each step, as they happen, when the caller streams."""

    def run(state: AgentState) -> dict[str, Any]:
        """The steps in order; their merged updates."""
        merged: dict[str, Any] = {}
        for step in steps:
            merged.update(step({**state, **merged}))  # type: ignore[typeddict-item]
        return merged

    return run


Leg = tuple[Callable[[AgentState], dict[str, Any]], Callable[[Any], str]]
"""A node function and the route that names where the turn goes after it."""


def then(
    node: Callable[[AgentState], dict[str, Any]], route: Callable[[Any], str], passes: dict[str, Leg] | None = None
) -> Callable[[AgentState], Command[str]]:
    """A node that names the next one itself: `route` on the state its update leaves, as a conditional edge would
    choose, without the edge's copy of every channel and its traced call on each turn (issue 27). Where the route
    names a leg of `passes`, that leg (its function, then its route) runs in the same step, as `in_order` would."""

    def run(state: AgentState) -> Command[str]:
        """The node's update (and its legs') and where the turn goes next."""
        update = node(state)
        target = route({**state, **update})
        while passes and target in passes:
            step, leg_route = passes[target]
            update = update | step({**state, **update})  # type: ignore[typeddict-item]
            target = leg_route({**state, **update})
        return Command(update=update, goto=target)

    return run


def build_graph(db_path: Path) -> StateGraph:
    """Wire the nodes; compile with a checkpointer to keep threads.

    read (language, parse, intent) names the act and, offline, runs it in the same LangGraph step (`then`'s legs):
    refuse | unsupported | faq | merge (the turn into the job) -> ask_back | advise (estimate, rank, layout,
    retrieve, write) | write (an inverse question without a job). With an LLM configured, read goes to `tools` (its
    tool-calling loop), a step of its own. Each step costs LangGraph bookkeeping whatever it does (~0.5 ms: task
    config, callbacks, channel copies), so an offline turn is one step."""
    graph = StateGraph(AgentState)
    read = in_order(language_node, parse_node, intent_node)
    write = lambda state: write_node(state, db_path)  # noqa: E731
    advise = in_order(estimate_node, lambda state: rank_node(state, db_path), layout_node, retrieve_node, write)
    acts: dict[str, Leg] = {
        "refuse": (refuse_node, _done),
        "unsupported": (unsupported_node, _done),
        "faq": (faq_node, _done),
        "merge": (merge_node, route_missing),
        "ask_back": (ask_back_node, _done),
        "advise": (advise, _done),
        "write": (write, _done),
    }
    graph.add_node("read", then(read, with_tools(route_intent), acts), destinations=AFTER_READ)
    graph.add_node("tools", lambda state: tools_node(state, db_path))  # LLM + tool calls (agent/tool_agent.py)
    graph.add_edge(START, "read")
    graph.add_edge("tools", END)
    return graph


def _done(_state: Any) -> str:
    """The route after an act: the turn ends."""
    return END
