"""Contract tests on responses RECORDED from a live llama.cpp-compatible server (issue 29).

tests/data/llm_wire/llama_cpp_recorded/ holds what llama-cpp-python's server (`python -m llama_cpp.server`, CPU,
SmolLM2-135M-Instruct from a PyPI wheel) really answered to the product's own requests, captured by the proxy in
tests/data/llm_wire/record.py: the parse (strict schema: a 500; JSON mode), the phrasing stream, the tool agent's
rounds, the breaker's trial and the server's own errors. Here they are replayed in the recorded order through
tests/fake_openai.py (no server needed) and what the user sees is asserted: the offline answer with exactly one
note, or the checked tool answer; never a traceback or the server's words; the breaker opened only by 5xx.
"""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import pytest

from agent.llm import client as llm
from agent.llm.phrasing import note
from agent.service import Advisor
from tests.fake_openai import WIRE_DIR, configured, offline_answers, recorded
from tools.catalog import ensure_db

FOLDER = WIRE_DIR / "llama_cpp_recorded"
JOB = "QLoRA su Llama 3.1 8B, 20M token, budget 50 euro"
TOOL_QUESTION = "what if I rent on vast vs runpod for a week of idle time?"
PROMPTS = WIRE_DIR.parents[2] / "prompts"
UNAVAILABLE = {
    json.loads((PROMPTS / "it" / "recommend.json").read_text("utf-8"))["llm_fallback_note"],
    note("unavailable", "it"),
}
RAW = (
    "Traceback",
    'File "',
    "site-packages",
    "validation error",
    "broadcast",
    "Internal Server Error",
    "maximum context length",
    "internal_server_error",
    "Error code",
)
"""Words of the server's own error bodies: none may reach the user."""
SERVER_ERRORS = {
    "fc_00_job_it_parse_json_schema": 500,  # response_format json_schema is not accepted (pydantic text, file path)
    "fc_01_job_it_parse_json_object": 500,  # "could not broadcast input array ..." on a prompt near n_ctx
    "fc_13_context_exceeded_breaker_trial": 400,  # context_length_exceeded, OpenAI style
    "fc_14_malformed_messages_plain": 500,  # a request pydantic rejects is a 500 here, not a 422
    "fc_15_malformed_json_raw": 500,  # text/plain "Internal Server Error"
}
"""The server's real error answers and their status."""
_spec = importlib.util.spec_from_file_location("llm_wire_record", WIRE_DIR / "record.py")
assert _spec and _spec.loader
record = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(record)


def replay(name: str) -> Any:
    """The recorded response `name` of the llama_cpp_recorded folder."""
    return recorded(f"llama_cpp_recorded/{name}")


def saved(name: str) -> dict[str, Any]:
    """The whole recorded file (request, response and how it was recorded)."""
    return json.loads((FOLDER / f"{name}.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    return ensure_db(tmp_path_factory.mktemp("recorded") / "catalog.sqlite")


@pytest.fixture(scope="module")
def offline(catalog, tmp_path_factory) -> dict[str, dict[str, Any]]:
    """What each message gets with no LLM configured."""
    return offline_answers(catalog, tmp_path_factory.mktemp("offline") / "t.sqlite", (JOB, TOOL_QUESTION))


@pytest.fixture()
def server(monkeypatch):
    """A fake server replaying recorded answers, configured as the recording was, the breaker closed around it."""
    with configured(monkeypatch, api_key="x", model="smollm2-135m") as fake:
        fake.default = (500, {"error": {"message": "unexpected request"}}, 0.0, 0.0)
        yield fake


@pytest.fixture()
def advisor(catalog, tmp_path):
    advisor = Advisor(checkpoint_path=tmp_path / "t.sqlite", db_path=catalog)
    yield advisor
    advisor.close()


def queue(server, *names: str) -> None:
    """Answer the next requests with these recordings, in this order."""
    for name in names:
        server.reply(replay(name))


def kinds(requests: list[dict[str, Any]]) -> list[str]:
    """Which of the product's requests each one was (record.kind_of)."""
    return [record.kind_of(request) for request in requests]


def shown(result: dict[str, Any]) -> str:
    """Everything the user reads of a turn."""
    return "\n".join([result.get("answer") or "", *(result.get("notes") or [])])


def test_every_file_says_it_was_recorded_live_with_what_and_how():
    files = sorted(FOLDER.glob("*.json"))
    assert len(files) >= 30
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        meta = data["recorded"]
        assert meta["server"].startswith("llama-cpp-python 0.3.36"), path
        assert "SmolLM2-135M-Instruct" in meta["model"] and meta["date"].startswith("2026-"), path
        assert "llama_cpp.server" in meta["server_command"] and "record.py" in meta["record_command"], path
        assert data["request"]["path"].startswith("/v1/") and isinstance(data["status"], int), path
        assert ("body" in data) != ("events" in data), path
    for name, status in SERVER_ERRORS.items():
        assert saved(name)["status"] == status, name


def test_a_job_turn_replayed_sends_the_recorded_requests_and_shows_the_offline_answer_with_one_note(
    server, advisor, offline
):
    """Recorded: strict schema -> 500, JSON mode -> 500, no response_format -> 500; then the phrasing stream,
    whose rewording of the 135M model changes figures: the offline answer is shown with the one 'unverified' note."""
    names = [
        "fc_00_job_it_parse_json_schema",
        "fc_01_job_it_parse_json_object",
        "fc_02_job_it_plain",
        "fc_04_job_it_phrasing_stream",
    ]
    queue(server, *names)
    result = advisor.respond(JOB)
    assert kinds(server.requests) == [record.kind_of(saved(name)["request"]["body"]) for name in names]
    assert result["parser"] == "offline"
    assert result["answer"] == offline[JOB]["answer"] and result["offers"] == offline[JOB]["offers"]
    assert result["notes"] == offline[JOB]["notes"] + [note("unverified", "it")], result["notes"]
    assert not [raw for raw in RAW if raw in shown(result)]
    assert not llm.breaker.is_open  # one parse call failed once (500): under the threshold


def test_a_job_turn_replayed_from_the_default_chat_format_shows_the_offline_answer_with_one_note(
    server, advisor, offline
):
    """Recorded with the model's own chat template: JSON mode answers 200 with JSON that is not a job spec (the
    offline parser takes over), then the rewording changes figures: one 'unverified' note."""
    names = [
        "default_00_job_it_parse_json_schema",
        "default_01_job_it_parse_json_object",
        "default_03_job_it_phrasing_stream",
    ]
    queue(server, *names)
    result = advisor.respond(JOB)
    assert kinds(server.requests) == [record.kind_of(saved(name)["request"]["body"]) for name in names]
    assert result["parser"] == "offline" and result["answer"] == offline[JOB]["answer"]
    assert result["notes"] == offline[JOB]["notes"] + [note("unverified", "it")], result["notes"]
    assert not [raw for raw in RAW if raw in shown(result)]


def test_a_tool_question_answered_in_plain_text_without_tools_is_checked_and_not_shown(server, advisor):
    """Recorded with the default chat format: the tools are in the request but the model writes prose with no tool
    call; its figures come from no tool, so the honest answer and one note are shown."""
    names = [
        "default_02_tool_question_parse_json_schema",
        "default_04_tool_question_parse_json_object",
        "default_05_tool_question_tool_agent",
    ]
    queue(server, *names)
    result = advisor.respond(TOOL_QUESTION)
    assert kinds(server.requests) == [record.kind_of(saved(name)["request"]["body"]) for name in names]
    assert result["answer"] == note("tool_failed", "en")
    assert result["notes"] == [note("tool_unverified", "en")], result["notes"]
    prose = json.loads(replay("default_05_tool_question_tool_agent").body or "")["choices"][0]["message"]["content"]
    assert prose and prose[:40] not in shown(result)


def test_with_a_4096_token_context_the_products_own_prompts_overflow_and_the_user_gets_offline_answers(
    server, advisor, offline
):
    """Recorded with --n_ctx 4096: the JSON-mode parse (5,037 tokens) and the tool agent's first round (4,293)
    are over the context (400 context_length_exceeded); the job turn still ends offline with one note, the tool
    question with the honest answer and the 'unavailable' note, and the breaker stays closed (the server is up)."""
    job = ["ctx4k_00_job_it_parse_json_schema", "ctx4k_01_job_it_parse_json_object", "ctx4k_02_job_it_plain"]
    queue(server, *job, "ctx4k_04_job_it_phrasing_stream")
    result = advisor.respond(JOB)
    assert result["answer"] == offline[JOB]["answer"]
    assert result["notes"] == offline[JOB]["notes"] + [note("unverified", "it")], result["notes"]
    tool = ["ctx4k_03_tool_question_parse_json_schema", "ctx4k_05_tool_question_parse_json_object"]
    queue(server, *tool, "ctx4k_06_tool_question_plain", "ctx4k_07_tool_question_tool_agent")
    result = advisor.respond(TOOL_QUESTION, thread_id="tools")
    assert saved("ctx4k_07_tool_question_tool_agent")["body"]["error"]["code"] == "context_length_exceeded"
    assert result["answer"] == note("tool_failed", "en")
    assert result["notes"] == [note("unavailable", "en")], result["notes"]
    assert kinds(server.requests)[-1] == "tool_agent" and not llm.breaker.is_open
    assert not [raw for raw in RAW if raw in shown(result)]


def test_the_recorded_stream_is_replayed_in_the_servers_own_framing():
    events = replay("fc_04_job_it_phrasing_stream").events
    assert events[-1] == "[DONE]" and len(events) > 10
    first = json.loads(events[0])
    assert first["object"] == "chat.completion.chunk" and first["choices"][0]["delta"] == {"role": "assistant"}
    text = "".join(json.loads(e)["choices"][0]["delta"].get("content") or "" for e in events[:-1])
    assert text.strip()


def test_a_tool_question_replayed_reaches_the_tools_and_a_model_that_never_answers_is_not_shown(server, advisor):
    """Recorded: the parse (schema 500, JSON mode 200 with invalid JSON), then four tool rounds in which the model
    calls provider_info each time (llama-cpp-python's chatml-function-calling ids) and never writes an answer."""
    names = [
        "fc_03_tool_question_parse_json_schema",
        "fc_05_tool_question_parse_json_object",
        "fc_06_tool_question_tool_agent",
        "fc_07_tool_question_tool_agent",
        "fc_08_tool_question_tool_agent",
        "fc_09_tool_question_tool_agent",
    ]
    queue(server, *names)
    result = advisor.respond(TOOL_QUESTION)
    assert kinds(server.requests) == [record.kind_of(saved(name)["request"]["body"]) for name in names]
    assert result["answer"] == note("tool_failed", "en")
    assert result["notes"] == [note("tool_no_answer", "en")], result["notes"]  # it wrote no figures at all
    rounds = [r for r in server.requests if r.get("tools")]
    call_id = json.loads(replay("fc_06_tool_question_tool_agent").body or "")["choices"][0]["message"]
    call_id = call_id["tool_calls"][0]["id"]
    answers = [m for m in rounds[1]["messages"] if m["role"] == "tool"]
    assert answers and answers[0]["tool_call_id"] == call_id
    assert "runpod" in answers[0]["content"] and "error" not in json.loads(answers[0]["content"])
    assert not [raw for raw in RAW if raw in shown(result)]


@pytest.mark.parametrize("trial", ["fc_10_breaker_trial_breaker_trial", "fc_12_unknown_model_breaker_trial"])
def test_the_recorded_one_token_trial_closes_the_breaker_and_the_turn_goes_on(
    server, advisor, offline, monkeypatch, trial
):
    """The trial's real answer (one token, finish_reason "length") closes the breaker; llama-cpp-python does not
    check the model name, so a trial under a wrong name gets the same 200."""
    monkeypatch.setenv("GPU_ADVISOR_LLM_COOLDOWN_S", "0")
    for _ in range(3):
        llm.breaker.failure()
    assert llm.breaker.is_open
    queue(server, trial, "fc_00_job_it_parse_json_schema", "fc_01_job_it_parse_json_object", "fc_02_job_it_plain")
    queue(server, "fc_04_job_it_phrasing_stream")
    result = advisor.respond(JOB)
    assert kinds(server.requests)[:2] == ["breaker_trial", "parse_json_schema"]
    assert server.requests[0]["max_tokens"] == 1 and server.requests[0]["messages"][0]["content"] == "ping"
    assert not llm.breaker.is_open
    assert result["answer"] == offline[JOB]["answer"]
    assert result["notes"] == offline[JOB]["notes"] + [note("unverified", "it")]


@pytest.mark.parametrize("name", sorted(SERVER_ERRORS))
def test_each_real_server_error_gives_the_offline_job_answer_with_one_note(server, advisor, offline, name):
    answer = replay(name)
    server.default = (answer.status, answer, 0.0, 0.0)
    result = advisor.respond(JOB)
    assert result["parser"] == "offline" and result["answer"] == offline[JOB]["answer"]
    extra = result["notes"][len(offline[JOB]["notes"]) :]
    assert result["notes"][: len(offline[JOB]["notes"])] == offline[JOB]["notes"]
    assert len(extra) == 1 and extra[0] in UNAVAILABLE, result["notes"]
    assert not [raw for raw in RAW if raw in shown(result)]


@pytest.mark.parametrize("name", sorted(SERVER_ERRORS))
def test_only_the_real_5xx_errors_open_the_breaker(server, advisor, name):
    answer = replay(name)
    server.default = (answer.status, answer, 0.0, 0.0)
    for index in range(3):
        advisor.respond(JOB, thread_id=f"t{index}")
    sent = len(server.requests)
    advisor.respond(JOB, thread_id="last")
    if SERVER_ERRORS[name] >= 500:
        assert llm.breaker.is_open and len(server.requests) == sent
    else:
        assert not llm.breaker.is_open and len(server.requests) > sent


@pytest.mark.parametrize("name", sorted(SERVER_ERRORS))
def test_a_tool_question_on_each_real_error_gets_the_honest_answer_and_one_note(server, advisor, name):
    answer = replay(name)
    server.default = (answer.status, answer, 0.0, 0.0)
    result = advisor.respond(TOOL_QUESTION)
    assert result["answer"] == note("tool_failed", "en")
    assert result["notes"] == [note("unavailable", "en")], result["notes"]
    assert not [raw for raw in RAW if raw in shown(result)]
