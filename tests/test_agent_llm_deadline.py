"""Time limits of the LLM path against a local OpenAI-wire server: a hanging server, a trickling stream, many turns
at once, and the circuit breaker. Asserted is behaviour (the configured deadline reaches every client, a timeout
opens the breaker, a hanging LLM costs a turn one call); the seconds are figures, printed by
benchmarks/llm_deadline.py beside the offline turn measured in the same run."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from agent.llm import client as llm
from agent.llm import parse as parse_llm
from agent.llm.phrasing import note, phrase_answer
from agent.service import Advisor
from tests.fake_openai import running
from tools.catalog.query import ensure_db

MESSAGE = "QLoRA su Llama 3.1 8B, 20M token, budget 50 euro"
DEADLINE_S = 1.0


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    return ensure_db(tmp_path_factory.mktemp("deadline") / "catalog.sqlite")


@pytest.fixture()
def fake(monkeypatch):
    """A fake OpenAI server, configured, with the breaker closed before and after."""
    with running() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("GPU_ADVISOR_MODEL", "test-model")
        monkeypatch.setenv("GPU_ADVISOR_LLM_TIMEOUT_S", str(DEADLINE_S))
        monkeypatch.delenv("GPU_ADVISOR_OFFLINE", raising=False)
        llm.breaker.reset()
        yield server
    llm.breaker.reset()


@pytest.fixture()
def deadlines(monkeypatch) -> list[float]:
    """The timeout every openai client of agent.llm.client is built with, in order (the real make_client still runs)."""
    seen: list[float] = []
    real = llm.make_client

    def spy(timeout: float | None = None) -> Any:
        seen.append(timeout if timeout is not None else llm.timeout_s())
        return real(timeout)

    monkeypatch.setattr(llm, "make_client", spy)
    return seen


def test_a_hanging_llm_costs_a_turn_one_deadline_and_the_turn_answers_offline(fake, catalog, tmp_path, deadlines):
    advisor = Advisor(checkpoint_path=tmp_path / "t.sqlite", db_path=catalog)
    fake.default = (200, "never mind", 30.0, 0.0)  # every request hangs for 30 s
    result = advisor.respond(MESSAGE)
    advisor.close()
    assert result["offers"] and result["parser"] == "offline"
    assert len(result["notes"]) == 1 and "offline" in result["notes"][0]  # said once, not per skipped call
    assert deadlines == [DEADLINE_S]  # one call, with the configured deadline; the phrasing call never started
    assert llm.breaker.is_open and len(fake.requests) == 1


def test_a_trickling_stream_is_cut_at_the_deadline(fake, deadlines):
    draft = "**Noleggia 1× H100** su runpod, circa 2,0 ore, **4,00 $** in totale."
    fake.reply(draft + " " + "ancora " * 200, chunk_delay_s=0.05)  # a word every 50 ms: ~10 s in all
    answer, why = phrase_answer(draft, "it")
    # cut, not read to the end: 'unavailable' (a timeout, which opens the breaker), not 'unverified' (a full text
    # that fails the claim check)
    assert (answer, why) == (draft, note("unavailable", "it"))
    assert deadlines == [DEADLINE_S] and llm.breaker.is_open


def test_the_parse_retries_share_one_deadline(fake, deadlines):
    fake.reply({"error": {"message": "no json_schema"}}, status=400, delay_s=0.7)
    fake.reply("{}", delay_s=0.7)  # the JSON-mode retry would end after the deadline
    answer = parse_llm.parse_with_llm("QLoRA", "en")
    # 0.7 s + 0.7 s passes one 1 s deadline but neither try's own: a timeout means both shared one client's deadline
    assert answer.error == "the LLM timed out"
    assert deadlines == [DEADLINE_S] and llm.breaker.is_open


def test_the_breaker_skips_the_llm_after_repeated_failures_and_retries_after_the_cool_down(fake, monkeypatch):
    monkeypatch.setenv("GPU_ADVISOR_LLM_BREAKER_FAILURES", "2")
    monkeypatch.setenv("GPU_ADVISOR_LLM_COOLDOWN_S", "0.5")
    fake.default = (500, {"error": {"message": "down"}}, 0.0, 0.0)
    for _ in range(2):
        assert parse_llm.parse_with_llm("QLoRA", "en").error == "the LLM server answered HTTP 500"
    sent = len(fake.requests)
    skipped = parse_llm.parse_with_llm("QLoRA", "en")
    assert "skipped" in (skipped.error or "") and len(fake.requests) == sent  # nothing went out
    time.sleep(0.6)
    fields = {name: None for name in parse_llm.JobFields.model_fields} | {"method": "qlora"}
    fake.default = (200, json.dumps(fields), 0.0, 0.0)
    assert parse_llm.parse_with_llm("QLoRA", "en").spec.method == "qlora"  # the trial call closes the breaker
    assert not llm.breaker.is_open


def test_two_dozen_concurrent_turns_on_a_hanging_llm_all_answer_offline_one_call_each_at_most(
    fake, catalog, tmp_path, deadlines
):
    turns = 24
    advisor = Advisor(checkpoint_path=tmp_path / "t.sqlite", db_path=catalog)
    fake.default = (200, "never mind", 30.0, 0.0)
    with ThreadPoolExecutor(turns) as pool:
        results = list(pool.map(lambda i: advisor.respond(MESSAGE, thread_id=f"llm-{i}"), range(turns)))
    advisor.close()
    assert all(r["offers"] and r["notes"] and r["parser"] == "offline" for r in results)
    assert llm.breaker.is_open  # the failures opened it: later turns skip the LLM at once
    # a hanging LLM costs a turn at most one call (the parse; no phrasing after it), each with the deadline
    assert 1 <= len(deadlines) <= turns and set(deadlines) == {DEADLINE_S}
    assert len(fake.requests) <= len(deadlines)  # a call abandoned at its deadline may never have been sent


def test_a_slow_llm_shares_one_deadline_per_turn_and_says_so_once(fake, catalog, tmp_path, deadlines):
    """The parse takes 0.7 of the turn's LLM budget: the phrasing call gets only what is left (not a deadline of
    its own), misses it, and the turn answers with one note."""
    advisor = Advisor(checkpoint_path=tmp_path / "t.sqlite", db_path=catalog)
    names = list(parse_llm.JobFields.model_fields)
    parsed = json.dumps({n: {"method": "qlora"}.get(n) for n in names})
    fake.reply(parsed, delay_s=0.7 * DEADLINE_S)  # the parse answers just in time
    fake.reply("Ecco.", delay_s=0.7 * DEADLINE_S)  # so would the phrasing, if it had its own deadline
    result = advisor.respond(MESSAGE)
    advisor.close()
    assert result["offers"] and result["parser"] == "llm"
    assert deadlines[0] == DEADLINE_S and len(deadlines) == 2, deadlines
    assert all(later <= (1 - 0.7) * DEADLINE_S + 1e-6 for later in deadlines[1:])  # what the turn had left
    assert result["notes"] == [note("unavailable", "it")]


def test_an_llm_that_fails_parse_and_phrasing_gets_one_note(fake, catalog, tmp_path):
    advisor = Advisor(checkpoint_path=tmp_path / "t.sqlite", db_path=catalog)
    fake.default = (500, {"error": {"message": "boom"}}, 0.0, 0.0)
    result = advisor.respond(MESSAGE)
    advisor.close()
    assert result["offers"] and len(result["notes"]) == 1, result["notes"]


def _is_probe(request: dict[str, Any]) -> bool:
    """The breaker's trial: one short message, at most one token, no tools and no response format."""
    return (
        request.get("max_tokens") == 1
        and len(request["messages"]) == 1
        and not request.get("tools")
        and not request.get("response_format")
        and not request.get("stream")
    )


def test_after_one_timeout_the_trial_is_the_cheapest_call_and_the_next_turn_uses_the_llm_again(
    fake, catalog, tmp_path, monkeypatch
):
    """issue 29: the trial used to be the parse (the heaviest request, the schema in the prompt), so a slow small
    server failed every trial and a long-running `serve` never used the LLM again after one timeout."""
    monkeypatch.setenv("GPU_ADVISOR_LLM_COOLDOWN_S", "0.3")
    advisor = Advisor(checkpoint_path=tmp_path / "t.sqlite", db_path=catalog)
    fake.reply("never mind", delay_s=5 * DEADLINE_S)  # the first turn's parse hangs: one timeout opens the breaker
    assert advisor.respond(MESSAGE, thread_id="a")["parser"] == "offline" and llm.breaker.is_open
    time.sleep(0.4)
    first = len(fake.requests)
    values = {"method": "qlora", "model": "llama-3.1-8b"}
    parsed = json.dumps({n: values.get(n) for n in parse_llm.JobFields.model_fields})
    fake.reply("ok")  # the trial
    fake.reply(parsed)  # the parse
    fake.default = (200, "", 0.0, 0.0)  # the phrasing: an empty rewording, the draft is shown
    result = advisor.respond(MESSAGE, thread_id="b")
    advisor.close()
    sent = fake.requests[first:]
    assert _is_probe(sent[0]) and not any(_is_probe(r) for r in sent[1:]), sent[0]
    assert result["parser"] == "llm" and result["offers"] and not llm.breaker.is_open


def test_a_failed_trial_keeps_the_breaker_open_and_sends_nothing_else(fake, catalog, tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_ADVISOR_LLM_COOLDOWN_S", "0.3")
    fake.default = (200, "never mind", 5 * DEADLINE_S, 0.0)  # the server keeps hanging
    advisor = Advisor(checkpoint_path=tmp_path / "t.sqlite", db_path=catalog)
    advisor.respond(MESSAGE, thread_id="a")
    time.sleep(0.4)
    first = len(fake.requests)
    result = advisor.respond(MESSAGE, thread_id="b")
    advisor.close()
    assert result["offers"] and result["parser"] == "offline" and len(result["notes"]) == 1
    assert [_is_probe(r) for r in fake.requests[first:]] == [True] and llm.breaker.is_open


def test_under_serve_one_timeout_does_not_keep_the_llm_off(fake, catalog, tmp_path, monkeypatch):
    """The same over HTTP, in the real app under uvicorn: a turn whose parse hangs answers offline; after the
    cool-down the next turn's first request is the trial, and that turn is parsed by the LLM again."""
    import httpx2

    from tests.web_server import serve, test_settings

    monkeypatch.setenv("GPU_ADVISOR_LLM_COOLDOWN_S", "0.3")
    values = {"method": "qlora", "model": "llama-3.1-8b"}
    parsed = json.dumps({n: values.get(n) for n in parse_llm.JobFields.model_fields})
    with serve(test_settings(tmp_path, catalog)) as app, httpx2.Client(base_url=app.url, timeout=60) as client:
        fake.reply("never mind", delay_s=5 * DEADLINE_S)
        first = client.post("/api/chat", json={"message": MESSAGE}).json()
        assert first["parser"] == "offline" and llm.breaker.is_open
        time.sleep(0.4)
        sent = len(fake.requests)
        fake.reply("ok")
        fake.reply(parsed)
        fake.default = (200, "", 0.0, 0.0)
        second = client.post("/api/chat", json={"message": MESSAGE}).json()
    assert _is_probe(fake.requests[sent]) and second["parser"] == "llm" and not llm.breaker.is_open
