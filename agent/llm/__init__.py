"""The one door to the configured LLM: client settings, one overall deadline per call, and a circuit breaker."""

from agent.llm.client import (
    CUT_SHORT,
    LlmUnavailable,
    call,
    llm_configured,
    make_client,
    model_name,
    timeout_s,
    turn_budget,
)
from agent.llm.lazy_openai import openai
from agent.llm.parse import parse_with_llm
from agent.llm.phrasing import LANGUAGE_NAMES, note, phrase_answer, with_note

__all__ = [
    "CUT_SHORT",
    "LANGUAGE_NAMES",
    "LlmUnavailable",
    "call",
    "llm_configured",
    "make_client",
    "model_name",
    "note",
    "openai",
    "parse_with_llm",
    "phrase_answer",
    "timeout_s",
    "turn_budget",
    "with_note",
]
