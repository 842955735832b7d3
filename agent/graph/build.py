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

from agent import writing
from agent.faq_answer import answer_question
from agent.graph import acts
from agent.graph.questions import (
    FIT_CHECK_GPU,
    comparison,
    feasibility,
    ranked,
    reconciled,
)
from agent.graph.state import AgentState
from agent.language import detect_language
from agent.llm import phrase_answer, with_note
from agent.parsing import JOB_DEFINING, classify_intent, merge_spec, parse_message, preference_of, turn_request
from agent.stream_events import progress as _progress
from agent.stream_events import verdict_known
from agent.tool_agent import tools_node, with_tools
from agent.writing import assumption_lines, public, rental_summary, verdict
from contract.jobspec import JobSpec
from kb.entries import entry
from kb.topics import topic_entry
from tools.catalog import CatalogUnavailableError, current_meta
from tools.memory import cached_estimate, request_for_plan, request_for_spec

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
    "parsed_unknown_model": None,
    "clarify": None,
    "act": None,
    "act_topic": None,
    "act_clears": [],
    "act_currency": None,
    "act_gpus": [],
    "act_count": None,
    "act_drops": [],
    "restored": False,
    "undo_missing": False,
    "replaced_top": None,
    "default_method": None,
    "model_guess": None,
}
log = logging.getLogger(__name__)
SPEC_NAMES = tuple(name for name in JobSpec.model_fields if name != "language")
DEFAULT_METHOD = "full_finetune"
"""The README's default method: a job that names none gets it, with the other methods compared in one line."""


def language_node(state: AgentState) -> dict[str, Any]:
    """Pick the reply language: explicit choice, else detection, else the previous turn's; reset per-turn fields."""
    text = state.get("message") or ""
    previous = state.get("language")
    guess = detect_language(text, explicit=state.get("explicit_language"), previous=previous)
    _progress("language", guess.language)
    supported = guess.supported or not text.strip()
    return PER_TURN_RESET | {"language": guess.language, "supported": supported}


def parse_node(state: AgentState) -> dict[str, Any]:
    """Read the JobSpec fields this message states (offline parser, or the LLM with offline fallback)."""
    language = state["language"]
    _progress("parse", language)
    if state.get("changes") or not (state.get("message") or "").strip():
        changes = dict(state.get("changes") or {})  # a button press: re-run the current job, maybe changed
        return {"parsed": changes, "mentioned": list(changes)}
    result = parse_message(state.get("message") or "", lang=language)
    parsed = {name: getattr(result.spec, name) for name in result.mentioned}
    notes = [writing.fixed_text("llm_fallback_note", language)] if result.fallback_reason else []
    notes += writing.refused_values(result.refused, language)
    return {
        "parsed": JobSpec.model_validate({"language": language, **parsed}).model_dump(mode="json", include=set(parsed)),
        "mentioned": result.mentioned,
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
    """The thread's offer preference after this turn, and whether the turn changed it."""
    before = None if new_job else state.get("preference")
    after = wished or before
    return {"preference": after, "preference_changed": after != state.get("preference") and not new_job}


def route_intent(state: AgentState) -> str:
    """Where the turn goes after intent classification."""
    return {"unsupported": "unsupported", "injection": "refuse", "out_of_scope": "refuse", "faq": "faq"}.get(
        state["intent"], "merge"
    )


def refuse_node(state: AgentState) -> dict[str, Any]:
    """A short refusal in the user's language; nothing reaches the tools."""
    key = "refuse_injection" if state["intent"] == "injection" else "out_of_scope"
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


def merge_node(state: AgentState) -> dict[str, Any]:
    """Make the thread's current job as the turn's act says: a new one, the old one changed (or cleared, or the
    pending what-if adopted), an earlier plan restored; questions, what-ifs and inverse questions leave it as it is."""
    language = state["language"]
    _progress("merge", language)
    previous = state.get("spec") if state["intent"] == "follow_up" else None
    parsed, mentioned = dict(state.get("parsed") or {}), list(state.get("mentioned") or [])
    compare_gpus = None
    if state.get("request") == "compare_count":
        compare_gpus = parsed.pop("num_gpus", None)
        mentioned = [name for name in mentioned if name != "num_gpus"]
    base, parsed, mentioned, extra = acts.merged_spec(state, previous, parsed, mentioned)  # type: ignore[arg-type]
    spec, _ = merge_spec(base, {**parsed, "language": language}, mentioned)
    missing, default_method = [], None
    if not spec.model and not spec.params_b:
        missing.append("model")
    if spec.method is None and not missing:  # the default method, compared with the others in the answer
        spec, default_method = spec.model_copy(update={"method": DEFAULT_METHOD}), DEFAULT_METHOD
    elif spec.method is None:
        missing.append("method")
    new = spec.model_dump(mode="json")
    before = state.get("spec")
    if state.get("act") in acts.PLAN_ACTS and not before and not acts.states_job(dict(state)):  # sets no job
        return {"spec": None, "missing": missing, "changed": [], "default_method": None}
    changed = [name for name in SPEC_NAMES if before and previous is not None and new.get(name) != before.get(name)]
    if state.get("preference_changed"):
        changed.append("prefer")
    names_model = previous is None or {"model", "params_b"} & set(mentioned)
    unknown = state.get("parsed_unknown_model") if names_model else state.get("unknown_model")
    replaced = state.get("last_top") if state.get("act") == "new_job" and before and before != new else None
    return {
        "spec": new,
        "missing": missing,
        "awaiting_fields": missing,
        "changed": changed,
        "compare_gpus": compare_gpus,
        "unknown_model": unknown if new.get("model") is None else None,
        "history": acts.history_after(state, before, new),
        "replaced_top": replaced,
        "default_method": default_method,
    } | extra


def route_missing(state: AgentState) -> str:
    """Ask back when the job cannot be sized yet, or the LLM parser asks which provider or GPU was meant; an
    inverse question without a job is answered from the registry and the estimator alone."""
    if state.get("act") == "inverse" and state.get("missing"):
        return "write"
    return "ask_back" if state.get("missing") or state.get("clarify") else "advise"


def ask_back_node(state: AgentState) -> dict[str, Any]:
    """Ask for what is missing (model or size, method), or which unknown provider/GPU the user meant."""
    question = state.get("clarify") or writing.ask_back(state["missing"], state["language"])
    return {
        "intent": "ask_back",
        "act": "ask_back",
        "answer": question,
        "answer_kind": "ask_back",
        "verdict": verdict("ask_back"),
    }


def estimate_node(state: AgentState) -> dict[str, Any]:
    """Memory on one GPU of the wished (or a common 80 GB) card, with the cheapest fixes when it does not fit."""
    _progress("estimate", state["language"])
    spec = JobSpec.model_validate(state["spec"])
    request, filled = request_for_spec(spec, num_gpus=1, gpu=spec.gpu or FIT_CHECK_GPU)
    single = cached_estimate(request)  # memory depends on the layout, not on budget/data/deadline: shared by jobs
    single.assumptions = filled + single.assumptions  # as estimate_for_spec words it
    fit = feasibility(spec) if state.get("request") == "feasibility" else None
    return {"single_gpu_estimate": single.model_dump(mode="json"), "feasibility": fit}


def rank_node(state: AgentState, db_path: Path) -> dict[str, Any]:
    """Rank catalog offers by total job cost (memory fit, topology, time, spot risk, budget, deadline, wishes), the
    preferred offer first; a GPU-count question also ranks the job on that count."""
    spec = acts.ranking_spec(dict(state), JobSpec.model_validate(state["spec"]))
    prefer = state.get("prefer") or state.get("preference")
    try:
        offers = current_meta(db_path).get("offer_count", 0)
        _progress("rank", state["language"], offers=writing.number(offers, state["language"], 0))
        ranking, notes = ranked(spec, db_path, prefer)
        compared = comparison(spec, state["compare_gpus"], db_path, prefer) if state.get("compare_gpus") else None
    except CatalogUnavailableError as error:  # the turn still answers: no offers, the memory estimate, a note
        log.error("catalog unavailable during a turn: %s", error)
        return {"ranking": {"offers": [], "catalog_unavailable": True}, "request": "plain"}
    result: dict[str, Any] = {"ranking": public(ranking)}  # tool texts without internal paths (issue 11)
    if notes:
        result["notes"] = list(state.get("notes") or []) + [writing.fixed_text(n, state["language"]) for n in notes]
    if compared is not None:
        result["comparison"] = public(compared)
    return result


def layout_node(state: AgentState) -> dict[str, Any]:
    """Topology verdict and memory breakdown of the recommended offer's layout."""
    _progress("topology", state["language"])
    offers = (state.get("ranking") or {}).get("offers") or []
    if not offers:
        return {"topology": None, "estimate": None}
    top = offers[0]
    spec = JobSpec.model_validate(state["spec"])
    request = request_for_plan(
        spec,
        top.get("settings") or {},
        gpu=top["gpu"],
        total_gpus=top["total_gpus"],
        gpus_per_node=top.get("gpu_count") or top["total_gpus"],
        vram_gib=top.get("vram_gib_per_gpu"),
    )  # the run the headline was priced with
    chosen = cached_estimate(request)  # the same layout recurs turn after turn
    topology = {
        "verdict": top.get("topology_verdict"),
        "params": top.get("topology_params") or {},
        "summary": next((r["text"] for r in top.get("reasons", []) if r["code"].startswith("topology_")), None),
        "layout": top.get("layout"),
        "gpu": top["gpu"],
        "gpu_count": top["total_gpus"],
        "nodes": top.get("nodes", 1),
        "comm_share": top.get("exposed_comm_share"),
    }
    return {
        "topology": topology,
        "estimate": chosen.model_dump(mode="json") | {"gradient_checkpointing": request.gradient_checkpointing},
    }


def _topics(state: AgentState) -> list[str]:
    """The FAQ topics the advice rests on, most important first."""
    spec, topics = state["spec"], []
    offers = (state.get("ranking") or {}).get("offers") or []
    single = (state.get("single_gpu_estimate") or {}).get("fit") or {}
    if (offers and offers[0].get("spot")) or spec.get("interruptible_ok") is not None:
        topics.append("spot")
    if not single.get("fits", True) or not offers:
        topics.append("memory")
    if offers and offers[0].get("total_gpus", 1) > 1:
        topics.append("interconnect")
    if spec.get("method") in ("lora", "qlora"):
        topics.append("lora_qlora")
    if "memory" not in topics:
        topics.append("memory")
    return topics[:3]


def retrieve_node(state: AgentState) -> dict[str, Any]:
    """Cite the FAQ entries behind the advice, in the user's language."""
    _progress("retrieve", state["language"])
    fine_tuning = state["spec"].get("method") in ("lora", "qlora", "full_finetune")
    citations, seen = [], set()
    for topic in _topics(state):
        entry_id = topic_entry(topic, fine_tuning=fine_tuning)
        if entry_id not in seen:
            seen.add(entry_id)
            citations.append(entry(entry_id, state["language"]).model_dump() | {"topic": topic})
    return {"citations": citations}


def write_node(state: AgentState, db_path: Path | None = None) -> dict[str, Any]:
    """Compose the answer from the tool results (templates) for what the turn asked; an LLM may rephrase it."""
    language = state["language"]
    _progress("write", language)
    if state.get("act") in acts.PLAN_ACTS and db_path is not None:
        written = acts.write_act(dict(state), db_path)
        verdict_known(written.get("verdict"))
        answer, note = phrase_answer(written["answer"], language)
        return written | {"answer": answer, "act": state.get("act"), "notes": with_note(dict(state), note, language)}
    offers = (state.get("ranking") or {}).get("offers") or []
    lines = _assumption_lines(state, offers[0] if offers else None)
    full = {**state, "assumption_lines": lines}
    request, citations = state.get("request"), []
    top = offers[0] if offers else None
    if request == "feasibility" and state.get("feasibility"):
        full["feasibility"] = reconciled(state["feasibility"], offers)
        kind, draft = "yes_no", writing.yes_no(full)
        answer_word = "yes" if full["feasibility"]["fits"] else "no"
        top = writing.rental_for(full["feasibility"], offers)[0]  # the rental the answer names
    elif request == "spot_delta" and state.get("last_top"):
        kind, draft, answer_word = "delta", writing.spot_delta(full), None
    elif request == "compare_count" and state.get("comparison"):
        kind, draft, answer_word = "compare", writing.compare(full), None
    else:
        kind, answer_word = "recommendation", None
        follow = state["intent"] == "follow_up" and state.get("last_top")
        draft, citations = (writing.follow_up if follow else writing.recommendation)(full)
        draft = "\n\n".join(p for p in (acts.preface(dict(state)), draft, acts.method_line(dict(state))) if p)
    found = verdict(kind, top, state["spec"], answer_word)
    verdict_known(found)
    answer, note = phrase_answer(draft, language)
    notes = with_note(dict(state), note, language)
    return {
        "answer": answer,
        "assumption_lines": lines,
        "notes": notes,
        "citations": citations,
        "act": state.get("act"),
        "answer_kind": kind,
        "verdict": found,
        "last_top": rental_summary(top) or state.get("last_top"),
        "last_kind": kind,
    }


def _assumption_lines(state: AgentState, top: dict[str, Any] | None) -> list[str]:
    """The defaults and data behind this answer, in the user's language (full English list in the JSON result)."""
    request, _ = request_for_spec(JobSpec.model_validate(state["spec"]))
    return assumption_lines(
        state["spec"],
        request.model_dump(),
        state.get("ranking") or {},
        state["language"],
        top,
        (state.get("estimate") or {}).get("gradient_checkpointing"),
    )


def in_order(*steps: Callable[[AgentState], dict[str, Any]]) -> Callable[[AgentState], dict[str, Any]]:
    """One graph node that runs `steps` in turn, each seeing the state as the ones before it left it, and returns
    their updates merged (every channel keeps its last value, so this equals one node per step). Each LangGraph step
    costs ~0.25 ms of bookkeeping (task config, callbacks, checkpoint copies); a new job runs 4 steps instead of 9
    (issue 14). Progress events still come from each step, as they happen, when the caller streams."""

    def run(state: AgentState) -> dict[str, Any]:
        """The steps in order; their merged updates."""
        merged: dict[str, Any] = {}
        for step in steps:
            merged.update(step({**state, **merged}))  # type: ignore[typeddict-item]
        return merged

    return run


def build_graph(db_path: Path) -> StateGraph:
    """Wire the nodes; compile with a checkpointer to keep threads.

    read (language, parse, intent) -> refuse | unsupported | faq | tools | merge; merge -> ask_back | advise
    (estimate, rank, layout, retrieve) -> write."""
    graph = StateGraph(AgentState)
    graph.add_node("read", in_order(language_node, parse_node, intent_node))
    graph.add_node("refuse", refuse_node)
    graph.add_node("unsupported", unsupported_node)
    graph.add_node("faq", faq_node)
    graph.add_node("tools", lambda state: tools_node(state, db_path))  # LLM + tool calls (agent/tool_agent.py)
    graph.add_node("merge", merge_node)
    graph.add_node("ask_back", ask_back_node)
    graph.add_node(
        "advise", in_order(estimate_node, lambda state: rank_node(state, db_path), layout_node, retrieve_node)
    )
    graph.add_node("write", lambda state: write_node(state, db_path))
    graph.add_edge(START, "read")
    graph.add_conditional_edges("read", with_tools(route_intent), ["refuse", "unsupported", "faq", "merge", "tools"])
    graph.add_conditional_edges("merge", route_missing, ["ask_back", "advise", "write"])
    graph.add_edge("advise", "write")
    for last in ("refuse", "unsupported", "faq", "ask_back", "write", "tools"):
        graph.add_edge(last, END)
    return graph
