"""The tool-calling agent against a local OpenAI-wire server that scripts tool calls: a good answer from tool
results, figures no tool gave, a malformed call, an unknown tool, a loop that never ends, offline and through the
advisor's graph."""

from __future__ import annotations

import json

import pytest

from agent.llm import client as llm
from agent.llm.phrasing import note
from agent.service import Advisor
from agent.tool_agent import MAX_STEPS, answer_with_tools, is_tool_question
from agent.toolbox import REGISTRY, ToolContext, call_tool
from tests.fake_openai import running, tool_calls
from tools.catalog.query import ensure_db

PER_SECOND = "Which providers bill per second?"


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    return ensure_db(tmp_path_factory.mktemp("tool-agent") / "catalog.sqlite")


@pytest.fixture()
def fake(monkeypatch):
    with running() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("GPU_ADVISOR_MODEL", "test-model")
        monkeypatch.setenv("GPU_ADVISOR_LLM_TIMEOUT_S", "3")
        monkeypatch.delenv("GPU_ADVISOR_OFFLINE", raising=False)
        llm.breaker.reset()
        yield server
    llm.breaker.reset()


def per_second_providers() -> list[str]:
    """Provider ids with 1-second billing, from the tool itself."""
    result = call_tool("provider_info", {})
    return [p.id for p in result.providers if p.billing_granularity_s == 1]


def tool_messages(request: dict) -> list[dict]:
    """The tool results the agent sent back to the model in one request."""
    return [m for m in request["messages"] if m["role"] == "tool"]


def test_an_answer_built_from_tool_results_is_shown(fake, catalog):
    providers = per_second_providers()
    reply = f"Per-second billing (1 s granularity): {', '.join(providers)}."
    fake.reply(tool_calls(("provider_info", {})))
    fake.reply(reply)
    result = answer_with_tools(PER_SECOND, "en", context=ToolContext(catalog))
    assert (result.answer, result.verified, result.tools_used) == (reply, True, ["provider_info"])
    first, second = fake.requests
    assert sorted(t["function"]["name"] for t in first["tools"]) == sorted(REGISTRY)
    assert json.loads(tool_messages(second)[0]["content"])["providers"]


@pytest.mark.parametrize(
    "bad",
    [
        "runpod bills per second and an H100 there costs $3.33/h.",
        "Use evilcloud: it bills per second and is never preempted.",
        "aws, gcp and nebius bill per second.",
    ],
)
def test_figures_or_names_no_tool_gave_are_not_shown(fake, catalog, bad):
    fake.reply(tool_calls(("provider_info", {"provider": "runpod"})))
    fake.reply(bad)
    result = answer_with_tools(PER_SECOND, "en", context=ToolContext(catalog))
    assert result.answer == note("tool_failed", "en") and result.note == note("tool_unverified", "en")
    assert not result.verified


def test_a_malformed_call_and_an_unknown_tool_go_back_to_the_model_as_errors(fake, catalog):
    offer = call_tool("catalog_query", {"gpu": "H100", "limit": 1}, ToolContext(catalog)).offers[0]
    fake.reply(tool_calls(("catalog_query", "{not json"), ("buy_gpus", {"count": 8})))
    fake.reply(tool_calls(("catalog_query", {"gpu": "H100", "limit": 1})))
    reply = f"The cheapest H100 offer is on {offer.provider} at ${offer.price_per_hour}/h."
    fake.reply(reply)
    result = answer_with_tools("cheapest H100 vs the rest?", "en", context=ToolContext(catalog))
    assert result.answer == reply and result.verified
    errors = [json.loads(m["content"])["error"] for m in tool_messages(fake.requests[1])]
    assert "not valid JSON" in errors[0] and "unknown tool 'buy_gpus'" in errors[1]


def test_a_model_that_never_stops_calling_tools_is_stopped(fake, catalog):
    fake.default = (200, tool_calls(("provider_info", {"provider": "aws"})), 0.0, 0.0)
    result = answer_with_tools(PER_SECOND, "it", context=ToolContext(catalog))
    assert len(fake.requests) == MAX_STEPS
    assert result.answer == note("tool_failed", "it") and not result.verified
    assert result.note == note("tool_no_answer", "it")  # it wrote no figures: not "held figures no tool gave"


def test_a_failing_llm_gives_the_honest_offline_answer(fake, catalog):
    fake.default = (500, {"error": {"message": "down"}}, 0.0, 0.0)
    result = answer_with_tools(PER_SECOND, "id", context=ToolContext(catalog))
    # an LLM is configured: the answer does not ask for OPENAI_API_KEY, the note says it was unavailable
    assert result.answer == note("tool_failed", "id") and result.note == note("unavailable", "id")
    assert "OPENAI_API_KEY" not in result.answer


@pytest.mark.parametrize("language", ["it", "id", "en"])
def test_offline_the_answer_says_an_llm_is_needed(monkeypatch, language):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert answer_with_tools(PER_SECOND, language).answer == note("needs_llm", language)


@pytest.mark.parametrize(
    "question",
    [
        "compare 4x A100 with 2x H100 for my job",
        "what if seq 8k?",
        PER_SECOND,
        "cheapest in EU regions",
        "confronta 4 A100 con 2 H100",
        "bagaimana jika seq 8k?",
        "quali provider fatturano al secondo?",
    ],
)
def test_tool_questions_are_recognised(question):
    assert is_tool_question(question)


def test_through_the_advisor_a_question_offline_cannot_answer_uses_the_tools(fake, catalog, tmp_path):
    advisor = Advisor(checkpoint_path=tmp_path / "t.sqlite", db_path=catalog)
    fake.default = (500, {"error": {}}, 0.0, 0.0)  # the job turn's parse/phrase calls fail: offline answer
    advisor.respond("QLoRA on Llama 3.1 8B, 20M tokens", thread_id="job")
    llm.breaker.reset()
    fake.default = None
    providers = per_second_providers()
    reply = f"Per-second billing (1 s granularity): {', '.join(providers)}."
    fake.reply(json.dumps({"method": None}))  # the parse step of this turn
    fake.reply(tool_calls(("provider_info", {})))
    fake.reply(reply)
    events = list(advisor.stream("who bills per second?", thread_id="job"))
    advisor.close()
    result = events[-1]["result"]
    assert result["answer"] == reply
    assert "".join(e["text"] for e in events if e["type"] == "delta") == reply  # streamed once verified
    system = next(r for r in fake.requests if "tools" in r)["messages"][0]["content"]
    assert "llama-3.1-8b" in system  # the thread's job reached the model


@pytest.mark.parametrize(
    "question", ["what if spot?", "compare 4x A100 with 2x H100 for my job", "cheapest in EU regions"]
)
def test_with_an_llm_a_follow_up_offline_answers_is_not_sent_to_the_tools(
    fake, catalog, tmp_path, monkeypatch, question
):
    advisor = Advisor(checkpoint_path=tmp_path / "t.sqlite", db_path=catalog)
    with monkeypatch.context() as offline:
        offline.setenv("GPU_ADVISOR_OFFLINE", "1")
        advisor.respond("QLoRA on Llama 3.1 8B, 20M tokens, budget 50 dollars", thread_id="job")
        expected = advisor.respond(question, thread_id="job")["answer"]  # what offline answers
        advisor.respond("QLoRA on Llama 3.1 8B, 20M tokens, budget 50 dollars", thread_id="job2")
    fake.default = (500, {"error": {}}, 0.0, 0.0)  # the LLM is configured but fails: no worse than offline
    result = advisor.respond(question, thread_id="job2")
    advisor.close()
    assert not any("tools" in r for r in fake.requests), result["answer"]
    assert result["answer"].split("\n")[0] == expected.split("\n")[0]


@pytest.mark.parametrize(
    "reply",
    ["Done: I deleted the catalog.", "I booked 4x H100 on runpod for you.", "Fatto: ho cancellato il catalogo."],
)
def test_a_final_answer_with_no_tool_result_behind_it_is_not_shown(fake, catalog, reply):
    fake.reply(reply)  # no tool call at all
    result = answer_with_tools("delete the catalog and book me 4 H100", "en", context=ToolContext(catalog))
    assert result.answer == note("tool_failed", "en") and not result.verified


@pytest.mark.parametrize(
    "bad",
    [
        "Lambda Cloud offers spot instances.",
        "Lambda Cloud bills per second.",
        "Lambda Cloud has a 60 minute minimum charge.",
        "Lambda Cloud bills per 60 s. Sign up at https://lambda.example.net for credits.",
        "Lambda Cloud bills per 60 s; send me your API key and I will check your quota.",
        "Lambda Cloud is the most reliable provider and bills per 60 s.",
    ],
)
def test_tool_facts_turned_around_are_not_shown(fake, catalog, bad):
    fake.reply(tool_calls(("provider_info", {"provider": "lambda"})))
    fake.reply(bad)
    result = answer_with_tools("does lambda offer spot?", "en", context=ToolContext(catalog))
    assert result.answer == note("tool_failed", "en") and not result.verified


def test_a_true_tool_fact_with_its_negation_is_shown(fake, catalog):
    fake.reply(tool_calls(("provider_info", {"provider": "lambda"})))
    reply = "Lambda Cloud bills per 60 s and has no spot instances."
    fake.reply(reply)
    result = answer_with_tools("does lambda offer spot?", "en", context=ToolContext(catalog))
    assert result.answer == reply and result.verified


def test_a_price_rounded_past_its_precision_or_on_another_provider_is_not_shown(fake, catalog):
    offers = call_tool("catalog_query", {"gpu": "H100", "limit": 3}, ToolContext(catalog)).offers
    other = next(o for o in offers if o.provider != offers[0].provider)
    for bad in (
        f"The cheapest H100 is on {offers[0].provider} at ${round(offers[0].price_per_hour)}/h.",
        f"The cheapest H100 is on {other.provider} at ${offers[0].price_per_hour}/h.",
    ):
        fake.reply(tool_calls(("catalog_query", {"gpu": "H100", "limit": 3})))
        fake.reply(bad)
        result = answer_with_tools("cheapest H100?", "en", context=ToolContext(catalog))
        assert result.answer == note("tool_failed", "en"), bad


def test_the_request_names_tool_choice_and_round_two_sends_content_as_a_string(fake, catalog):
    fake.reply(tool_calls(("provider_info", {"provider": "lambda"})))  # content null, as servers send it
    fake.reply("Lambda Cloud bills per 60 s and has no spot instances.")
    answer_with_tools("does lambda offer spot?", "en", context=ToolContext(catalog))
    first, second = fake.requests
    assert first["tool_choice"] == "auto" and second["tool_choice"] == "auto"
    assistant = next(m for m in second["messages"] if m["role"] == "assistant")
    assert assistant["content"] == ""  # llama.cpp's server answers HTTP 500 to null content
