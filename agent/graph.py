"""The advisor's LangGraph graph: one chat turn from a message to a grounded answer, nodes top to bottom.

language -> parse -> intent -> (refuse | unsupported | faq | merge) ; merge -> (ask_back | estimate) ;
estimate -> rank (topology per offer inside the ranking) -> layout (topology and memory of the chosen offer)
-> retrieve (FAQ entries that back the advice) -> write.

Every node returns plain dicts (pydantic models dumped), so the SQLite checkpointer stores JSON-ready state. Only
`spec` and `language` matter to the next turn; the first node clears the per-turn results.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph

import prompts
from agent import writing
from agent.faq_answer import answer_question
from agent.intent import classify_intent
from agent.language import detect_language
from agent.parsing import merge_spec, parse_message
from agent.phrasing import phrase_answer
from contract.jobspec import JobSpec
from agent.state import AgentState
from kb.entries import entry
from kb.topics import topic_entry
from tools.catalog import read_meta
from tools.estimator import estimate_for_spec, request_for_spec
from tools.ranking import rank_offers

FIT_CHECK_GPU = "H100"
"""Single-card reference when the user names no GPU: the common 80 GB class."""
LAYOUT_SHARDING = {"single_gpu": "none", "ddp": "ddp", "zero2": "zero2", "fsdp": "fsdp", "tensor_parallel": "none"}
PER_TURN_RESET: dict[str, Any] = {
    "intent": None, "parsed": {}, "mentioned": [], "missing": [], "estimate": None, "single_gpu_estimate": None,
    "topology": None, "ranking": None, "citations": [], "assumption_lines": [], "answer": "", "notes": [],
    "parser": "offline", "fallback_reason": None,
}


@cache
def _progress_labels(language: str) -> dict[str, str]:
    """Localised progress labels (prompts/progress.<lang>.json)."""
    return json.loads(prompts.load(f"progress.{language}.json"))


def _progress(node: str, language: str, **values: Any) -> None:
    """Tell a streaming caller which step runs now (no-op when nobody streams)."""
    try:
        write = get_stream_writer()
    except RuntimeError:
        return
    label = _progress_labels(language if language in ("it", "id", "en") else "en").get(node, node)
    write({"type": "progress", "node": node, "label": label.format(**values)})


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
    return {"parsed": JobSpec.model_validate({"language": language, **parsed}).model_dump(mode="json",
                                                                                         include=set(parsed)),
            "mentioned": result.mentioned, "parser": result.parser, "fallback_reason": result.fallback_reason,
            "notes": notes}


def intent_node(state: AgentState) -> dict[str, Any]:
    """Classify the turn: a new job, a change to the current one, an FAQ question, off-topic or an injection."""
    if not state.get("supported", True):
        return {"intent": "unsupported"}
    if state.get("changes") or not (state.get("message") or "").strip():
        return {"intent": "follow_up" if state.get("spec") else "job_request"}
    intent = classify_intent(state.get("message") or "", state.get("mentioned") or [],
                             has_current_job=bool(state.get("spec")))
    if intent == "job_request" and state.get("awaiting_fields"):
        intent = "follow_up"  # the answer to our ask-back completes the pending job
    return {"intent": intent}


def route_intent(state: AgentState) -> str:
    """Where the turn goes after intent classification."""
    return {"unsupported": "unsupported", "injection": "refuse", "out_of_scope": "refuse",
            "faq": "faq"}.get(state["intent"], "merge")


def refuse_node(state: AgentState) -> dict[str, Any]:
    """A short refusal in the user's language; nothing reaches the tools."""
    key = "refuse_injection" if state["intent"] == "injection" else "out_of_scope"
    return {"answer": writing.fixed_text(key, state["language"])}


def unsupported_node(state: AgentState) -> dict[str, Any]:
    """A polite English answer naming the supported languages."""
    return {"language": "en", "answer": writing.fixed_text("unsupported_language", "en")}


def faq_node(state: AgentState) -> dict[str, Any]:
    """Answer a plain question from the knowledge base, cited."""
    _progress("faq", state["language"])
    result = answer_question(state.get("message") or "", lang=state["language"])
    return {"answer": result.answer, "citations": [c.model_dump() for c in result.citations]}


def merge_node(state: AgentState) -> dict[str, Any]:
    """Make the thread's current job: a new one for a job request, the old one changed for a follow-up."""
    language = state["language"]
    _progress("merge", language)
    current = state.get("spec") if state["intent"] == "follow_up" else None
    spec, _ = merge_spec(current, {"language": language, **state.get("parsed", {})}, state.get("mentioned") or [])
    missing = []
    if not spec.model and not spec.params_b:
        missing.append("model")
    if spec.method is None:
        missing.append("method")
    return {"spec": spec.model_dump(mode="json"), "missing": missing, "awaiting_fields": missing}


def route_missing(state: AgentState) -> str:
    """Ask back when the job cannot be sized yet."""
    return "ask_back" if state.get("missing") else "estimate"


def ask_back_node(state: AgentState) -> dict[str, Any]:
    """Ask for what is missing (model or size, method)."""
    return {"intent": "ask_back", "answer": writing.ask_back(state["missing"], state["language"])}


def estimate_node(state: AgentState) -> dict[str, Any]:
    """Memory on one GPU of the wished (or a common 80 GB) card, with the cheapest fixes when it does not fit."""
    _progress("estimate", state["language"])
    spec = JobSpec.model_validate(state["spec"])
    single = estimate_for_spec(spec, num_gpus=1, gpu=spec.gpu or FIT_CHECK_GPU)
    return {"single_gpu_estimate": single.model_dump(mode="json")}


def rank_node(state: AgentState, db_path: Path) -> dict[str, Any]:
    """Rank catalog offers by total job cost (memory fit, topology, time, spot risk, budget, deadline, wishes)."""
    offers = read_meta(db_path).get("offer_count", 0)
    _progress("rank", state["language"], offers=writing.number(offers, state["language"], 0))
    spec = JobSpec.model_validate(state["spec"])
    ranking = rank_offers(spec, db_path=db_path).model_dump(mode="json")
    first = ranking.get({"speed": "fastest", "cost": "cheapest_that_fits"}.get(state.get("prefer") or "", ""))
    if first:  # the user asked for the fastest or the cheapest offer first
        ranking["offers"] = [first] + [o for o in ranking["offers"] if not writing.same_rental(o, first)]
    return {"ranking": ranking}


def layout_node(state: AgentState) -> dict[str, Any]:
    """Topology verdict and memory breakdown of the recommended offer's layout."""
    _progress("topology", state["language"])
    offers = (state.get("ranking") or {}).get("offers") or []
    if not offers:
        return {"topology": None, "estimate": None}
    top = offers[0]
    spec = JobSpec.model_validate(state["spec"])
    sharding = LAYOUT_SHARDING.get(top.get("layout") or "single_gpu", "none")
    chosen = estimate_for_spec(spec, num_gpus=top["total_gpus"], sharding=sharding,  # type: ignore[arg-type]
                               vram_gib=top.get("vram_gib_per_gpu"), gpu=top["gpu"])
    topology = {"verdict": top.get("topology_verdict"), "params": top.get("topology_params") or {},
                "summary": next((r["text"] for r in top.get("reasons", []) if r["code"].startswith("topology_")), None),
                "layout": top.get("layout"), "gpu": top["gpu"], "gpu_count": top["total_gpus"],
                "nodes": top.get("nodes", 1), "comm_share": top.get("exposed_comm_share")}
    return {"topology": topology, "estimate": chosen.model_dump(mode="json")}


def _topics(state: AgentState) -> list[str]:
    """The FAQ topics the advice rests on, most important first."""
    spec, topics = state["spec"], []
    offers = (state.get("ranking") or {}).get("offers") or []
    single = (state.get("single_gpu_estimate") or {}).get("fit") or {}
    if offers and offers[0].get("spot") or spec.get("interruptible_ok") is not None:
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


def write_node(state: AgentState) -> dict[str, Any]:
    """Compose the answer from the tool results (template); an LLM may rephrase it, numbers checked."""
    language = state["language"]
    _progress("write", language)
    lines = _assumption_lines(state)
    draft = writing.recommendation({**state, "assumption_lines": lines})
    answer, note = phrase_answer(draft, language)
    notes = list(state.get("notes") or []) + ([note] if note else [])
    return {"answer": answer, "assumption_lines": lines, "notes": notes}


def _assumption_lines(state: AgentState) -> list[str]:
    """The defaults and data behind this answer, in the user's language (full English list in the JSON result)."""
    request, _ = request_for_spec(JobSpec.model_validate(state["spec"]))
    return writing.assumption_lines(state["spec"], request.model_dump(), state.get("ranking") or {},
                                    state["language"])


def build_graph(db_path: Path) -> StateGraph:
    """Wire the nodes; compile with a checkpointer to keep threads."""
    graph = StateGraph(AgentState)
    graph.add_node("language", language_node)
    graph.add_node("parse", parse_node)
    graph.add_node("intent", intent_node)
    graph.add_node("refuse", refuse_node)
    graph.add_node("unsupported", unsupported_node)
    graph.add_node("faq", faq_node)
    graph.add_node("merge", merge_node)
    graph.add_node("ask_back", ask_back_node)
    graph.add_node("estimate", estimate_node)
    graph.add_node("rank", lambda state: rank_node(state, db_path))
    graph.add_node("layout", layout_node)
    graph.add_node("retrieve", retrieve_node)
    graph.add_node("write", write_node)
    graph.add_edge(START, "language")
    graph.add_edge("language", "parse")
    graph.add_edge("parse", "intent")
    graph.add_conditional_edges("intent", route_intent, ["refuse", "unsupported", "faq", "merge"])
    graph.add_conditional_edges("merge", route_missing, ["ask_back", "estimate"])
    graph.add_edge("estimate", "rank")
    graph.add_edge("rank", "layout")
    graph.add_edge("layout", "retrieve")
    graph.add_edge("retrieve", "write")
    for last in ("refuse", "unsupported", "faq", "ask_back", "write"):
        graph.add_edge(last, END)
    return graph
