"""The LLM path against a server with llama.cpp-server-like rules (issue 29): HTTP 500 for a strict json_schema
response_format and for an assistant message whose content is null, and tools used only when the request names a
tool_choice. A job turn, and a tool question, must still get the LLM's checked answer, not the offline fallback."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent.llm import client as llm
from agent.llm import parse as parse_llm
from agent.service import Advisor
from agent.tool_agent import answer_with_tools
from agent.toolbox import ToolContext, call_tool
from tests.fake_openai import running, tool_calls
from tools.catalog.query import ensure_db


def llama_cpp_rules(body: dict[str, Any]) -> tuple[int, Any] | None:
    """What this kind of server refuses, as it refuses it (a 500 with an error object)."""
    if (body.get("response_format") or {}).get("type") == "json_schema":
        return 500, {"error": {"code": 500, "message": "json_schema is not supported", "type": "server_error"}}
    if any(m.get("role") == "assistant" and m.get("content") is None for m in body.get("messages", [])):
        return 500, {"error": {"code": 500, "message": "content must be a string", "type": "server_error"}}
    if body.get("tools") and body.get("tool_choice") is None:
        return 200, {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "I cannot see any tools."},
                }
            ],
        }
    return None


@pytest.fixture()
def server(monkeypatch, tmp_path):
    with running() as fake:
        fake.check = llama_cpp_rules
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("GPU_ADVISOR_MODEL", "m")
        monkeypatch.setenv("GPU_ADVISOR_LLM_TIMEOUT_S", "5")
        monkeypatch.delenv("GPU_ADVISOR_OFFLINE", raising=False)
        llm.breaker.reset()
        yield fake
    llm.breaker.reset()


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    return ensure_db(tmp_path_factory.mktemp("wire") / "catalog.sqlite")


def test_a_job_turn_parses_in_json_mode_and_keeps_the_breaker_closed(server, catalog, tmp_path):
    advisor = Advisor(checkpoint_path=tmp_path / "t.sqlite", db_path=catalog)
    values = {"method": "qlora", "model": "llama-3.1-8b", "dataset_tokens": 20_000_000}
    server.reply(json.dumps({n: values.get(n) for n in parse_llm.JobFields.model_fields}))
    server.default = (200, "", 0.0, 0.0)  # the phrasing: an empty rewording, the draft is shown
    result = advisor.respond("QLoRA on Llama 3.1 8B, 20M tokens")
    advisor.close()
    assert result["parser"] == "llm" and result["offers"]
    assert not llm.breaker.is_open


def test_a_tool_question_gets_its_tools_and_a_second_round(server, catalog):
    providers = [p.id for p in call_tool("provider_info", {}).providers if p.billing_granularity_s == 1]
    reply = f"Per-second billing (1 s granularity): {', '.join(providers)}."
    server.reply(tool_calls(("provider_info", {})))
    server.reply(reply)
    result = answer_with_tools("who bills per second?", "en", context=ToolContext(catalog))
    assert (result.answer, result.verified, result.note) == (reply, True, None)
