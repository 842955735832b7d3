"""The job path of the graph: merge the turn into the job, ask back for what is missing, estimate, rank, check
the layout, retrieve the FAQ entries to cite and write the answer."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from agent import writing
from agent.graph import acts
from agent.graph.acts.gpu_mentions import named_gpus
from agent.graph.listed import listed_by_recommendation
from agent.graph.questions import (
    FIT_CHECK_GPU,
    comparison,
    feasibility,
    ranked,
    reconciled,
)
from agent.graph.state import AgentState
from agent.llm import phrase_answer, with_note
from agent.parsing import merge_spec
from agent.stream_events import progress as _progress
from agent.stream_events import verdict_known
from agent.writing import assumption_lines, public, rental_summary, verdict
from contract.jobspec import JobSpec
from kb.entries import entry
from kb.topics import topic_entry
from tools.catalog import CatalogUnavailableError, current_meta
from tools.memory import cached_estimate, request_for_plan, request_for_spec

log = logging.getLogger(__name__)
SPEC_NAMES = tuple(name for name in JobSpec.model_fields if name != "language")
DEFAULT_METHOD = "full_finetune"
"""The README's default method: a job that names none gets it, with the other methods compared in one line."""


def merge_node(state: AgentState) -> dict[str, Any]:
    """Make the thread's current job as the turn's act says: a new one, the old one changed (or cleared, or the
    pending what-if adopted), an earlier plan restored; questions, what-ifs and inverse questions leave it as it is."""
    language = state["language"]
    _progress("merge", language)
    if state.get("act") == "ask_back" and state.get("act_topic") == "third_party" and state.get("spec"):
        # someone else's job: ask for its model, the thread's own job kept until that one is named
        return {"spec": state["spec"], "missing": ["model"], "awaiting_fields": ["model"], "awaiting_new": True}
    if state.get("act_topic") == "focus" and state.get("spec"):  # half a setting: ask for the other half
        return {"spec": state["spec"], "missing": [], "clarify": acts.focus_question(dict(state))}
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
    if state.get("preference_changed") or extra.get("preference_changed"):  # switched, or a switch undone
        changed.append("prefer")
    names_model = previous is None or {"model", "params_b"} & set(mentioned)
    unknown = state.get("parsed_unknown_model") if names_model else state.get("unknown_model")
    replaced = state.get("last_top") if state.get("act") == "new_job" and before and before != new else None
    lapsed = {"pending": None} if before != new else {}  # a what-if's proposal stands until the job changes
    return (
        {
            "spec": new,
            "missing": missing,
            "awaiting_fields": missing,
            "changed": changed,
            "compare_gpus": compare_gpus,
            "unknown_model": unknown if new.get("model") is None else None,
            "history": acts.history_after(state, before, new),
            "replaced_top": replaced,
            "default_method": default_method,
        }
        | lapsed
        | extra
    )


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
        "act": "what_if" if state.get("act") == "what_if" else "ask_back",  # "if I add epochs?": which value
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
    asks = state.get("request") == "feasibility"  # the cards the message offers are tried from the smallest
    fit = feasibility(spec, named_gpus(state.get("message") or "")) if asks else None
    return {"single_gpu_estimate": single.model_dump(mode="json"), "feasibility": fit}


def rank_node(state: AgentState, db_path: Path) -> dict[str, Any]:
    """Rank catalog offers by total job cost (memory fit, topology, time, spot risk, budget, deadline, wishes), the
    preferred offer first; a GPU-count question also ranks the job on that count."""
    job = JobSpec.model_validate(state["spec"])
    subject = acts.hardware_subject(dict(state), job)
    spec = job.model_copy(update=dict.fromkeys(acts.unbound(subject, job)))
    prefer = state.get("prefer") or state.get("preference")
    try:
        offers = current_meta(db_path).get("offer_count", 0)
        _progress("rank", state["language"], offers=writing.number(offers, state["language"], 0))
        ranking, notes = ranked(spec, db_path, prefer, public=True)  # tool texts without internal paths (issue 11)
        compared = comparison(spec, state["compare_gpus"], db_path, prefer) if state.get("compare_gpus") else None
    except CatalogUnavailableError as error:  # the turn still answers: no offers, the memory estimate, a note
        log.error("catalog unavailable during a turn: %s", error)
        return {"ranking": {"offers": [], "catalog_unavailable": True}, "request": "plain"}
    result: dict[str, Any] = {"ranking": acts.shown_first(dict(state), ranking)}
    if subject or state.get("hardware_subject"):  # kept in the thread only while there is one (checkpoints stay small)
        result["hardware_subject"] = subject
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
        draft = _with_options_weighed(state, draft, db_path)
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
        "listed": listed_by_recommendation(dict(state), top, kind == "recommendation" and not follow),
        "last_kind": kind,
    }


def _with_options_weighed(state: AgentState, draft: str, db_path: Path | None) -> str:
    """A new job asking which of two GPUs to rent: after the verdict, each with its best plan and which wins."""
    if state.get("act") != "new_job" or db_path is None or not (state.get("ranking") or {}).get("offers"):
        return draft
    if not (state.get("hardware_subject") or {}).get("fields") or not acts.compares_hardware(dict(state)):
        return draft
    verdict_line, _, rest = draft.partition("\n\n")
    return "\n\n".join(p for p in (verdict_line, *acts.compare(dict(state), db_path), rest) if p)


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
