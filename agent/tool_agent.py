"""Questions outside the fixed job pipeline, answered by the LLM calling the registry's tools (OpenAI function calling).

Only questions the offline path cannot answer come here ("who bills per second?" beyond the FAQ's reach; job
follow-ups stay with the offline acts). With an LLM configured the model calls the tools of agent/toolbox.py
(bounded steps and calls; malformed arguments and unknown tools come back to it as tool errors), and its final text
is shown only when every number, provider, GPU, instance and region in it is in the tool results (agent/claims/check.py)
and every sentence is backed by a tool record (agent/claims/support_tools.py: units, spot and billing facts, "cheapest");
an answer with no tool result behind it is never shown. Offline, or when the LLM fails, the answer says honestly
that this needs an LLM, or that the tools could not answer (localised).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import prompts
from agent import llm
from agent.claims import check_grounded, extract
from agent.llm import (
    LANGUAGE_NAMES,
    note,
    openai,  # imported on first use: not on the offline path
)
from agent.stream_events import emit

if TYPE_CHECKING:  # the registry (pydantic models for every tool, ~40 ms to import) loads on the first LLM turn
    from agent.toolbox import ToolContext

MAX_STEPS = 4
"""LLM rounds (tool calls, then the answer); a model that keeps calling tools is stopped here."""
MAX_CALLS_PER_STEP = 4
MAX_RESULT_CHARS = 12_000
"""A tool result longer than this is cut before it goes back to the model (large rankings)."""
BUDGET_DEADLINES = 3.0
"""Outside a chat turn the whole tool conversation gets this many LLM deadlines (agent/llm/client.py); inside one, the
turn's single LLM budget (llm.turn_budget) bounds it first."""
CUES_FILE = Path(__file__).with_name("tool_cues.json")


@dataclass(frozen=True)
class ToolAnswer:
    """The tool agent's answer, the tools it used, and a note when the LLM's text was not used."""

    answer: str
    tools_used: list[str] = field(default_factory=list)
    note: str | None = None
    verified: bool = False


@cache
def _cues() -> re.Pattern[str]:
    """One pattern for every cue of a tool question."""
    cues = json.loads(CUES_FILE.read_text(encoding="utf-8"))["cues"]
    return re.compile("|".join(f"(?:{cue})" for cue in cues), re.IGNORECASE)


def is_tool_question(message: str) -> bool:
    """Whether a message asks something the fixed pipeline does not answer (comparison, what-if, provider facts)."""
    return bool(_cues().search(message or ""))


def _system(language: str, job: dict[str, Any] | None) -> str:
    """The system prompt with the reply language, the registry's tools and the thread's current job."""
    from agent.toolbox import tool_summaries

    job_json = json.dumps({k: v for k, v in (job or {}).items() if v is not None}, ensure_ascii=False)
    return (
        prompts.load("tool_agent_system.txt")
        .replace("{language_name}", LANGUAGE_NAMES.get(language, "English"))
        .replace("{job}", job_json)
        .replace("{tools}", tool_summaries())
    )


VERBOSE_KEYS = frozenset({"sources", "notes", "assumptions", "options", "excluded_examples"})
"""Long fields the model does not need to answer (citations of provider docs, layout alternatives...)."""


def _slim(value: Any) -> Any:
    """The value without VERBOSE_KEYS, at any depth."""
    if isinstance(value, dict):
        return {k: _slim(v) for k, v in value.items() if k not in VERBOSE_KEYS}
    if isinstance(value, list):
        return [_slim(v) for v in value]
    return value


def compact_result(data: dict[str, Any]) -> str:
    """A tool result as JSON under MAX_RESULT_CHARS: verbose fields dropped, then the longest lists halved."""
    data = _slim(data)
    text = json.dumps(data, ensure_ascii=False)
    while len(text) > MAX_RESULT_CHARS:
        lists = [(len(json.dumps(v)), k) for k, v in data.items() if isinstance(v, list) and len(v) > 1]
        if not lists:
            return json.dumps({"error": "the result is too large; ask for fewer items"})
        key = max(lists)[1]
        data = {**data, key: data[key][: len(data[key]) // 2], "truncated": True}
        text = json.dumps(data, ensure_ascii=False)
    return text


def _run_call(name: str, arguments: str, context: ToolContext) -> tuple[str, bool]:
    """One tool call's result for the model (compact JSON), and whether it succeeded."""
    from agent.toolbox import ToolInputError, call_tool

    try:
        result = call_tool(name, arguments, context).model_dump(mode="json")
    except ToolInputError as error:
        return json.dumps({"error": str(error)}), False
    except Exception as error:
        return json.dumps({"error": f"{name} failed: {type(error).__name__}"}), False
    return compact_result(result), True


def _grounding_names(message: str, language: str, job: dict[str, Any] | None) -> frozenset[str]:
    """Names the reply may use without a tool result: regions and GPUs the user wrote, USD, the job's currency."""
    names = {name for name in extract(message, language).names if name.startswith(("region:", "gpu:"))}
    currency = ((job or {}).get("budget") or {}).get("currency")
    return frozenset(names | {"currency:USD"} | ({f"currency:{currency}"} if currency else set()))


def answer_with_tools(
    message: str, language: str, *, context: ToolContext | None = None, job: dict[str, Any] | None = None
) -> ToolAnswer:
    """Let the LLM answer with tool calls; every claim of its reply checked against the tool results."""
    if not llm.llm_configured():
        return ToolAnswer(answer=note("needs_llm", language))
    from agent.tool_schemas import llm_tools
    from agent.toolbox import ToolContext

    context = context or ToolContext()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": _system(language, job)},
        {"role": "user", "content": message},
    ]
    results: list[str] = []
    used: list[str] = []
    ends_at = time.monotonic() + BUDGET_DEADLINES * llm.timeout_s()
    try:
        for _ in range(MAX_STEPS):
            remaining = ends_at - time.monotonic()
            if remaining <= 0:
                raise llm.LlmUnavailable("the LLM timed out")
            choice = llm.call(
                lambda client: client.chat.completions.create(
                    model=llm.model_name(), messages=messages, tools=llm_tools(), tool_choice="auto", temperature=0
                ),
                deadline_s=min(remaining, llm.timeout_s()),
            ).choices[0]
            reply = choice.message
            calls = list(reply.tool_calls or [])[:MAX_CALLS_PER_STEP]
            if not calls and getattr(choice, "finish_reason", None) in llm.CUT_SHORT:  # a list cut mid-way
                return ToolAnswer(
                    answer=note("tool_failed", language), tools_used=used, note=note("tool_incomplete", language)
                )
            if not calls:
                return _final(reply.content or "", message, language, job, results, used)
            messages.append(
                {
                    "role": "assistant",
                    "content": reply.content or "",  # null: HTTP 500 on llama.cpp
                    "tool_calls": [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.function.name, "arguments": c.function.arguments},
                        }
                        for c in calls
                    ],
                }
            )
            for call in calls:
                content, ok = _run_call(call.function.name, call.function.arguments, context)
                if ok:
                    results.append(content)
                    used.append(call.function.name)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
    except (llm.LlmUnavailable, openai.OpenAIError, ValueError, AttributeError, IndexError, TypeError):
        return ToolAnswer(answer=note("tool_failed", language), tools_used=used, note=note("unavailable", language))
    return ToolAnswer(answer=note("tool_failed", language), tools_used=used, note=note("tool_no_answer", language))


def _final(
    text: str, message: str, language: str, job: dict[str, Any] | None, results: list[str], used: list[str]
) -> ToolAnswer:
    """The model's reply when every claim in it is in the tool results; else the honest fallback."""
    from agent.claims import tool_problems

    text = text.strip()
    sources = "\n".join(results)
    allowed = _grounding_names(message, language, job)
    check = check_grounded(text, sources, language, source_language="en", extra_names=allowed)
    if text and check.ok and not tool_problems(text, results, language, allowed=allowed):
        return ToolAnswer(answer=text, tools_used=used, verified=True)
    return ToolAnswer(answer=note("tool_failed", language), tools_used=used, note=note("tool_unverified", language))


def _kb_answers(message: str, language: str) -> bool:
    """Whether the FAQ knowledge base has an answer for the message."""
    from kb.retrieval import rank

    return rank(message, language).answerable


def wants_tools(state: dict[str, Any], target: str) -> bool:
    """Whether a turn the graph would send to `target` goes to the tool agent instead: only what offline cannot answer.

    A tool question (comparison, what-if, provider facts, regions) the knowledge base cannot answer (offline it gets
    the honest 'needs an LLM' answer); with an LLM, also one the offline path would decline as out of scope. Job
    follow-ups (what-if, compare, a region change) stay with the offline acts, which answer them from the tools."""
    message = state.get("message") or ""
    if state.get("changes") or not is_tool_question(message):
        return False
    if target == "faq":
        return not _kb_answers(message, state.get("language") or "en")
    return target == "refuse" and state.get("intent") == "out_of_scope" and llm.llm_configured()


def with_tools(route: Callable[[dict[str, Any]], str]) -> Callable[[dict[str, Any]], str]:
    """The graph's intent router, sending tool questions to the 'tools' node."""

    def routed(state: dict[str, Any]) -> str:
        target = route(state)
        return "tools" if wants_tools(state, target) else target

    return routed


def tools_node(state: dict[str, Any], db_path: Path | None = None) -> dict[str, Any]:
    """Graph node: the tool agent's verified answer (streamed whole, once checked), with its note."""
    language = state.get("language") or "en"
    emit({"type": "progress", "node": "tools", "label": note("progress_tools", language)})
    from agent.toolbox import ToolContext

    result = answer_with_tools(
        state.get("message") or "", language, context=ToolContext(db_path), job=state.get("spec")
    )
    emit({"type": "delta", "text": result.answer})
    from agent.writing import fixed_text

    # the answer is the tool agent's: its own note says what happened to it, not the parse's fallback note
    parse_note = fixed_text("llm_fallback_note", language)
    notes = [n for n in state.get("notes") or [] if n != parse_note] + ([result.note] if result.note else [])
    return {"answer": result.answer, "notes": notes, "citations": [], "answer_kind": "tools"}
