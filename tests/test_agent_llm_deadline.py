"""Time limits of the LLM path against a local OpenAI-wire server: a hanging server, a trickling stream, many turns
at once, and the circuit breaker. Bounds are the configured deadline plus the offline turn measured in the same test.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from agent import llm, parse_llm
from agent.phrasing import note, phrase_answer
from agent.service import Advisor
from tests.fake_openai import running
from tools.catalog import ensure_db

MESSAGE = "QLoRA su Llama 3.1 8B, 20M token, budget 50 euro"
DEADLINE_S = 1.0
SLACK_S = 1.5
"""Thread start-up, the offline fallback and a busy shared machine."""


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


def offline_turn_seconds(advisor: Advisor, monkeypatch) -> float:
    """How long the same turn takes with no LLM (the baseline of every bound here)."""
    with monkeypatch.context() as patch:
        patch.setenv("GPU_ADVISOR_OFFLINE", "1")
        start = time.perf_counter()
        advisor.respond(MESSAGE)
        return time.perf_counter() - start


def test_a_hanging_llm_costs_a_turn_one_deadline_and_the_turn_answers_offline(fake, catalog, tmp_path, monkeypatch):
    advisor = Advisor(checkpoint_path=tmp_path / "t.sqlite", db_path=catalog)
    baseline = offline_turn_seconds(advisor, monkeypatch)
    fake.default = (200, "never mind", 30.0, 0.0)  # every request hangs for 30 s
    start = time.perf_counter()
    result = advisor.respond(MESSAGE)
    elapsed = time.perf_counter() - start
    advisor.close()
    assert result["offers"] and result["parser"] == "offline"
    assert len(result["notes"]) == 1 and "offline" in result["notes"][0]  # said once, not per skipped call
    assert elapsed < baseline + DEADLINE_S + SLACK_S, (elapsed, baseline)  # the parse timed out: phrasing skipped
    assert llm.breaker.is_open and len(fake.requests) == 1


def test_a_trickling_stream_is_cut_at_the_deadline(fake):
    draft = "**Noleggia 1× H100** su runpod, circa 2,0 ore, **4,00 $** in totale."
    fake.reply(draft + " " + "ancora " * 200, chunk_delay_s=0.05)  # a word every 50 ms: ~10 s in all
    start = time.perf_counter()
    answer, why = phrase_answer(draft, "it")
    elapsed = time.perf_counter() - start
    assert (answer, why) == (draft, note("unavailable", "it"))
    assert elapsed < DEADLINE_S + SLACK_S, elapsed


def test_the_parse_retries_share_one_deadline(fake):
    fake.reply({"error": {"message": "no json_schema"}}, status=400, delay_s=0.7)
    fake.reply("{}", delay_s=0.7)  # the JSON-mode retry would end after the deadline
    start = time.perf_counter()
    answer = parse_llm.parse_with_llm("QLoRA", "en")
    assert answer.error == "the LLM timed out" and time.perf_counter() - start < DEADLINE_S + SLACK_S


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


def test_two_dozen_concurrent_turns_on_a_hanging_llm_all_answer_within_the_deadline(fake, catalog, tmp_path,
                                                                                  monkeypatch):
    turns = 24
    advisor = Advisor(checkpoint_path=tmp_path / "t.sqlite", db_path=catalog)
    with monkeypatch.context() as patch, ThreadPoolExecutor(turns) as pool:
        patch.setenv("GPU_ADVISOR_OFFLINE", "1")
        start = time.perf_counter()
        list(pool.map(lambda i: advisor.respond(MESSAGE, thread_id=f"offline-{i}"), range(turns)))
        baseline = time.perf_counter() - start  # the same load with no LLM at all
    fake.default = (200, "never mind", 30.0, 0.0)

    def turn(i: int) -> tuple[float, dict]:
        began = time.perf_counter()
        result = advisor.respond(MESSAGE, thread_id=f"llm-{i}")
        return time.perf_counter() - began, result

    with ThreadPoolExecutor(turns) as pool:
        start = time.perf_counter()
        results = list(pool.map(turn, range(turns)))
        wall = time.perf_counter() - start
    advisor.close()
    assert all(r["offers"] and r["notes"] for _, r in results)
    slowest = max(seconds for seconds, _ in results)
    assert slowest < baseline + DEADLINE_S + SLACK_S, (slowest, baseline)
    assert wall < baseline + DEADLINE_S + SLACK_S, (wall, baseline)
    assert llm.breaker.is_open  # the failures opened it: later turns skip the LLM at once
    print(f"\n{turns} concurrent turns: offline {baseline:.2f} s, hanging LLM {wall:.2f} s (slowest {slowest:.2f} s)")


def test_a_slow_llm_shares_one_deadline_per_turn_and_says_so_once(fake, catalog, tmp_path, monkeypatch):
    advisor = Advisor(checkpoint_path=tmp_path / "t.sqlite", db_path=catalog)
    baseline = offline_turn_seconds(advisor, monkeypatch)
    names = list(parse_llm.JobFields.model_fields)
    parsed = json.dumps({n: {"method": "qlora"}.get(n) for n in names})
    fake.reply(parsed, delay_s=0.7 * DEADLINE_S)  # the parse answers just in time
    fake.reply("Ecco.", delay_s=0.7 * DEADLINE_S)  # so would the phrasing, if it had its own deadline
    start = time.perf_counter()
    result = advisor.respond(MESSAGE)
    elapsed = time.perf_counter() - start
    advisor.close()
    assert result["offers"] and result["parser"] == "llm"
    assert elapsed < baseline + DEADLINE_S + 0.5 * SLACK_S, (elapsed, baseline)
    assert result["notes"] == [note("unavailable", "it")]


def test_an_llm_that_fails_parse_and_phrasing_gets_one_note(fake, catalog, tmp_path):
    advisor = Advisor(checkpoint_path=tmp_path / "t.sqlite", db_path=catalog)
    fake.default = (500, {"error": {"message": "boom"}}, 0.0, 0.0)
    result = advisor.respond(MESSAGE)
    advisor.close()
    assert result["offers"] and len(result["notes"]) == 1, result["notes"]
