"""Contract tests: the requests the product makes, answered with the wire formats of real servers (issue 29).

Each response is a file in tests/data/llm_wire/<server>/ saying which server and version it imitates and where the
format is documented (vLLM, llama.cpp's llama-server, the OpenAI API, an nginx proxy in front of one), served by
tests/fake_openai.py over real HTTP to the real openai client. Asserted is what the user sees: with any failure the
offline answer (computed here with no LLM configured) and exactly one note, never a traceback or a raw server
error; with a server that works, the checked LLM answer; and the breaker, which only availability failures open.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent.faq_answer import answer_question, llm_rephraser
from agent.llm import client as llm
from agent.llm.phrasing import note
from agent.service import Advisor
from tests.fake_openai import WIRE_DIR, configured, offline_answers, recorded
from tools.catalog import ensure_db

JOB = "QLoRA su Llama 3.1 8B, 20M token, budget 50 euro"
TOOL_QUESTION = "what if I rent on vast vs runpod for a week of idle time?"
"""A tool question the knowledge base cannot answer: with an LLM configured it goes to the tool agent."""
FAQ = "posso usare le spot in generale?"
AVAILABILITY = {
    "llama_cpp/tools_need_jinja_500",
    "llama_cpp/loading_model_503",
    "openai/rate_limited_429",
    "nginx/internal_error_500_html",
    "nginx/bad_gateway_502_html",
}
"""Failures that say the service is unwell (5xx, 429): they count against the breaker."""
CONTENT = {
    "vllm/tool_choice_not_enabled_400",
    "vllm/unknown_model_404",
    "vllm/context_too_long_400",
    "llama_cpp/context_exceeded_400",
    "openai/unknown_model_404",
    "openai/context_length_exceeded_400",
    "nginx/too_large_413_html",
    "gateway/empty_choices",
}
"""Failures about the request or the answer (4xx, an unusable body): the server is up, the breaker stays closed."""
PROMPTS = WIRE_DIR.parents[2] / "prompts"
UNAVAILABLE = {
    json.loads((PROMPTS / "it" / "recommend.json").read_text("utf-8"))["llm_fallback_note"],
    note("unavailable", "it"),
}
"""The two ways a job turn says the LLM could not be used (the parse's note, the phrasing's): one of them, once."""
PARSED = json.dumps(
    {
        "method": "qlora",
        "model": "llama-3.1-8b",
        "dataset_tokens": 20_000_000,
        "budget": {"amount": 50, "currency": "EUR"},
    }
)
"""The parse of JOB, as a model would return it."""
RAW = ("Traceback", "Error code", "<html", "BadRequestError", "server_error", "exceed_context", "nginx")


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    return ensure_db(tmp_path_factory.mktemp("contract") / "catalog.sqlite")


@pytest.fixture(scope="module")
def offline(catalog, tmp_path_factory) -> dict[str, dict[str, Any]]:
    """What each message gets with no LLM configured."""
    return offline_answers(catalog, tmp_path_factory.mktemp("offline") / "t.sqlite", (JOB, TOOL_QUESTION))


@pytest.fixture()
def server(monkeypatch):
    """A fake server speaking recorded wire formats, configured, with the breaker closed before and after."""
    with configured(monkeypatch, api_key="k", model="m") as fake:
        yield fake


@pytest.fixture()
def advisor(catalog, tmp_path):
    advisor = Advisor(checkpoint_path=tmp_path / "t.sqlite", db_path=catalog)
    yield advisor
    advisor.close()


def always(server, name: str) -> None:
    """Answer every request with the recorded response `name`."""
    answer = recorded(name)
    server.default = (answer.status, answer, 0.0, 0.0)


def shown(result: dict[str, Any]) -> str:
    """Everything the user reads of a turn."""
    return "\n".join([result.get("answer") or "", *(result.get("notes") or [])])


def test_every_recording_says_what_it_imitates_and_where_the_format_is_documented():
    files = sorted(WIRE_DIR.rglob("*.json"))
    assert len(files) >= 20
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["imitates"] and data["documented"] and data["answers"], path
        assert ("body" in data) != ("events" in data), path
    names = {str(path.relative_to(WIRE_DIR).with_suffix("")) for path in files}
    assert names >= AVAILABILITY | CONTENT


@pytest.mark.parametrize("name", sorted(AVAILABILITY | CONTENT))
def test_a_failing_server_gives_the_offline_job_answer_with_one_note(server, advisor, offline, name):
    always(server, name)
    result = advisor.respond(JOB)
    expected = offline[JOB]
    assert result["answer"] == expected["answer"] and result["offers"] == expected["offers"]
    assert result["parser"] == "offline"
    extra = result["notes"][len(expected["notes"]) :]
    assert result["notes"][: len(expected["notes"])] == expected["notes"]
    assert len(extra) == 1 and extra[0] in UNAVAILABLE, result["notes"]
    assert not [raw for raw in RAW if raw in shown(result)]
    assert server.requests, "the LLM was never asked"


@pytest.mark.parametrize("name", sorted(AVAILABILITY | CONTENT))
def test_only_availability_failures_open_the_breaker(server, advisor, name):
    always(server, name)
    for index in range(3):
        advisor.respond(JOB, thread_id=f"t{index}")
    sent = len(server.requests)
    advisor.respond(JOB, thread_id="last")
    if name in AVAILABILITY:
        assert llm.breaker.is_open and len(server.requests) == sent  # skipped at once, nothing sent
    else:
        assert not llm.breaker.is_open and len(server.requests) > sent  # the server is up: keep asking


@pytest.mark.parametrize("name", sorted(AVAILABILITY | CONTENT | {"llama_cpp/tool_call_as_text"}))
def test_a_tool_question_the_server_fails_gets_the_honest_answer_and_one_note(server, advisor, name):
    always(server, name)
    result = advisor.respond(TOOL_QUESTION)
    assert result["answer"] == note("tool_failed", "en")
    expected = "tool_unverified" if name == "llama_cpp/tool_call_as_text" else "unavailable"
    assert result["notes"] == [note(expected, "en")], result["notes"]
    assert not [raw for raw in RAW if raw in shown(result)]


@pytest.mark.parametrize("name", sorted(AVAILABILITY | CONTENT))
def test_a_faq_answer_the_server_fails_is_the_guide_text_with_one_note(server, name):
    """`gpu-advisor ask` with an LLM: the rephrasing fails, the extractive answer is shown with one fallback line."""
    offline_answer = answer_question(FAQ, lang="it")
    always(server, name)
    result = answer_question(FAQ, lang="it", rephraser=llm_rephraser(llm.make_client(), llm.model_name()))
    fallback = (WIRE_DIR.parents[2] / "prompts" / "it" / "faq_llm_fallback.txt").read_text(encoding="utf-8").strip()
    assert result.answer == fallback + "\n\n" + offline_answer.answer
    assert result.citations == offline_answer.citations
    assert not [raw for raw in RAW if raw in result.answer]


def test_a_faq_rephrasing_that_does_not_check_out_says_so_once(server):
    """A reply came but held a figure the guide does not: one line says it was not backed, not also 'unavailable'."""
    offline_answer = answer_question(FAQ, lang="it")
    server.default = (200, "Sì, le spot costano il 90% in meno su tutti i provider.", 0.0, 0.0)
    result = answer_question(FAQ, lang="it", rephraser=llm_rephraser(llm.make_client(), llm.model_name()))
    rejected = (WIRE_DIR.parents[2] / "prompts" / "it" / "faq_llm_rejected.txt").read_text(encoding="utf-8").strip()
    assert result.answer == rejected + "\n\n" + offline_answer.answer


@pytest.mark.parametrize("server_name", ["vllm", "llama_cpp", "openai"])
def test_a_tool_call_in_each_servers_format_reaches_the_tools_and_the_checked_answer_is_shown(
    server, advisor, server_name
):
    server.reply("{}")  # the parse: no job in this message
    server.reply(recorded(f"{server_name}/tool_call"))
    server.reply(recorded(f"{server_name}/answer_after_tools"))
    server.default = (500, {"error": {"message": "unexpected request"}}, 0.0, 0.0)
    result = advisor.respond(TOOL_QUESTION)
    assert result["answer"] == "Per-second billing (1 s granularity): aws, gcp, runpod, vast."
    assert result["notes"] == []
    rounds = [r for r in server.requests if r.get("tools")]
    assert len(rounds) == 2 and all(r["tool_choice"] == "auto" for r in rounds)
    assistant = [m for m in rounds[1]["messages"] if m["role"] == "assistant"]
    assert assistant and all(m["content"] == "" for m in assistant)  # never null: llama.cpp answers that with 500
    assert [m["role"] for m in rounds[1]["messages"]][-1] == "tool"


def test_a_tool_answer_cut_by_the_length_limit_is_not_shown(server, advisor):
    """Every claim of the cut text is in the tool results, but the list stops mid-way: not an answer."""
    server.reply("{}")
    server.reply(recorded("vllm/tool_call"))
    server.reply(recorded("vllm/answer_cut_by_length"))
    result = advisor.respond(TOOL_QUESTION)
    assert result["answer"] == note("tool_failed", "en")
    assert result["notes"] == [note("tool_incomplete", "en")]


def test_a_strict_schema_parse_in_vllms_format_is_used(server, advisor):
    server.reply(recorded("vllm/parse_json"))
    always(server, "vllm/stream_echo")
    result = advisor.respond("QLoRA on Llama 3.1 8B, 20M tokens")
    assert result["parser"] == "llm" and result["offers"]
    assert server.requests[0]["response_format"]["type"] == "json_schema"


@pytest.mark.parametrize("name", ["vllm/stream_echo", "llama_cpp/stream_echo_usage"])
def test_a_phrasing_stream_in_each_servers_framing_is_shown(server, advisor, offline, name):
    """The rewording is the draft itself (echoed back): it passes the checks, so it is shown with no note; the
    llama.cpp framing ends with a usage chunk whose choices list is empty."""
    server.reply(PARSED)
    always(server, name)
    result = advisor.respond(JOB)
    assert result["answer"] == offline[JOB]["answer"] and result["notes"] == offline[JOB]["notes"]
    assert any(r.get("stream") for r in server.requests)


def test_a_phrasing_stream_cut_by_the_length_limit_is_not_shown(server, advisor, offline):
    """Half the draft, then finish_reason "length": every sentence of it checks out, but it is not the answer."""
    server.reply(PARSED)
    always(server, "vllm/stream_cut_by_length")
    result = advisor.respond(JOB)
    assert result["answer"] == offline[JOB]["answer"]
    assert result["notes"] == offline[JOB]["notes"] + [note("incomplete", "it")], result["notes"]
    assert not llm.breaker.is_open


def test_a_streamed_turn_on_a_failing_server_streams_the_offline_answer_and_one_note(server, advisor, offline):
    always(server, "nginx/internal_error_500_html")
    events = list(advisor.stream(JOB))
    final = events[-1]
    assert final["type"] == "final", events[-1]
    assert final["result"]["answer"] == offline[JOB]["answer"]
    extra = final["result"]["notes"][len(offline[JOB]["notes"]) :]
    assert len(extra) == 1 and extra[0] in UNAVAILABLE, final["result"]["notes"]
    text = "".join(event.get("text", "") for event in events if event["type"] == "delta")
    assert text.strip() == offline[JOB]["answer"].strip()
    assert not [raw for raw in RAW if raw in json.dumps(events)]
