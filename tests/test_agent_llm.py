"""The agent with an LLM configured: a local OpenAI-compatible server, the real openai client, fallbacks checked."""

from __future__ import annotations

import json

import pytest

from agent import parse_llm
from agent.service import Advisor
from tests.fake_openai import running

MESSAGE = "QLoRA su Llama 3.1 8B, 20M token, budget 50 euro"


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("llm-home")


@pytest.fixture(scope="module")
def draft(home):
    """The offline answer for MESSAGE: what the LLM is asked to rephrase."""
    advisor = Advisor(checkpoint_path=home / "offline.sqlite", db_path=home / "catalog.sqlite")
    try:
        return advisor.respond(MESSAGE)["answer"]
    finally:
        advisor.close()


@pytest.fixture()
def llm(monkeypatch, home):
    """An advisor talking to a fake OpenAI server; yields (advisor, server)."""
    with running() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("GPU_ADVISOR_MODEL", "test-model")
        monkeypatch.setenv("GPU_ADVISOR_LLM_TIMEOUT", "2")
        monkeypatch.delenv("GPU_ADVISOR_OFFLINE", raising=False)
        advisor = Advisor(checkpoint_path=home / "llm.sqlite", db_path=home / "catalog.sqlite")
        yield advisor, server
        advisor.close()


def _parse_answer() -> str:
    """A valid structured parse of MESSAGE, as the LLM would return it."""
    values = {"model": "llama-3.1-8b", "method": "qlora", "dataset_tokens": 20_000_000,
              "budget": {"amount": 50, "currency": "EUR"}}
    return json.dumps({name: values.get(name) for name in parse_llm.JobFields.model_fields})


def test_llm_rephrasing_is_streamed_and_used_when_numbers_are_intact(llm, draft):
    advisor, server = llm
    rephrased = "Ecco la mia proposta.\n\n" + draft
    server.reply(_parse_answer())
    server.reply(rephrased)
    events = list(advisor.stream(MESSAGE))
    result = events[-1]["result"]
    assert result["answer"] == rephrased.strip() and result["parser"] == "llm" and result["notes"] == []
    deltas = "".join(e["text"] for e in events if e["type"] == "delta")
    assert deltas.strip() == rephrased.strip()
    phrase_request = server.requests[-1]
    assert phrase_request["stream"] is True and draft in phrase_request["messages"][-1]["content"]


def test_an_invented_number_sends_the_template_back(llm, draft):
    advisor, server = llm
    server.reply(_parse_answer())
    server.reply(draft + "\n\nCon lo sconto costa solo 3,99 $.")
    result = advisor.respond(MESSAGE)
    assert result["answer"] == draft
    assert any("offline" in note for note in result["notes"])


@pytest.mark.parametrize("failure", [{"status": 500, "content": {"error": {"message": "boom"}}},
                                     {"status": 200, "content": "", "delay_s": 0},
                                     {"status": 200, "content": "too late", "delay_s": 3.0}])  # past the 2 s timeout
def test_llm_failures_fall_back_to_the_offline_answer_and_say_so(llm, draft, failure):
    advisor, server = llm
    server.reply(_parse_answer())
    server.reply(failure["content"], status=failure["status"], delay_s=failure.get("delay_s", 0))
    result = advisor.respond(MESSAGE)
    assert result["answer"] == draft and result["notes"]


def test_parser_failure_falls_back_offline_and_the_turn_still_answers(llm, draft):
    advisor, server = llm
    for _ in range(2):  # structured output, then JSON mode: both garbage
        server.reply("this is not json")
    server.reply(draft)  # the phrasing step repeats the draft
    result = advisor.respond(MESSAGE)
    assert result["parser"] == "offline" and result["spec"]["model"] == "llama-3.1-8b"
    assert result["offers"] and result["notes"]
