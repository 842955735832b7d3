"""A turn runs LangGraph's background tasks (its checkpoint save) in the calling thread, with the same results and
errors as LangGraph's thread pool (agent/graph/inline.py); a streamed turn too, its events sent through
agent.stream_events rather than LangGraph's custom stream mode."""

from __future__ import annotations

import threading

import pytest

from agent.graph import inline
from agent.service import Advisor

JOB = "QLoRA su Llama 3 70B, budget 300 euro, vanno bene le spot?"


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """No LLM, no PostgreSQL: the offline graph over SQLite threads."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GPU_ADVISOR_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def advisor(tmp_path):
    """An advisor on private files."""
    made = Advisor(checkpoint_path=tmp_path / "threads.sqlite", db_path=tmp_path / "catalog.sqlite")
    yield made
    made.close()


def _started_threads(monkeypatch) -> list[str]:
    """Names of the threads started from now on."""
    started: list[str] = []
    original = threading.Thread.start

    def start(self: threading.Thread) -> None:
        started.append(self.name)
        original(self)

    monkeypatch.setattr(threading.Thread, "start", start)
    return started


def test_a_turn_saves_its_checkpoint_without_starting_a_thread(advisor, monkeypatch):
    thread = advisor.respond(JOB)["thread_id"]
    started = _started_threads(monkeypatch)
    follow_up = advisor.respond("e con 4 GPU?", thread_id=thread)
    saved = advisor.store.saver.get_tuple({"configurable": {"thread_id": thread}})
    assert inline.installed()
    assert started == []
    assert follow_up["offers"] and saved.checkpoint["channel_values"]["pending"] == {"num_gpus": 4}


def test_a_failed_checkpoint_save_fails_the_turn_as_before(advisor, monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(advisor.store.saver, "put", refuse)
    with pytest.raises(OSError, match="disk full"):
        advisor.respond(JOB)


def test_outside_a_turn_langgraph_keeps_its_thread_pool():
    with inline.executor_for_config({}) as pool:
        assert not isinstance(pool, inline.InlineExecutor)
        assert pool.submit(threading.current_thread).result() is not threading.current_thread()
    with inline.inline_bookkeeping(), inline.executor_for_config({}) as here:
        assert here.submit(threading.current_thread).result() is threading.current_thread()
        failed = here.submit(int, "x")
    assert isinstance(failed.exception(), ValueError)


def test_a_streamed_turn_still_streams_and_saves(advisor):
    events = list(advisor.stream(JOB))
    final = events[-1]
    assert final["type"] == "final" and final["result"]["offers"]
    assert any(event["type"] == "progress" for event in events)
    follow_up = advisor.respond("e con 4 GPU?", thread_id=final["result"]["thread_id"])
    assert follow_up["intent"] == "follow_up"


def test_a_streamed_turn_starts_only_its_own_thread(advisor, monkeypatch):
    """The turn runs detached from its consumer (one thread); LangGraph starts no pool for it."""
    thread = advisor.respond(JOB)["thread_id"]
    started = _started_threads(monkeypatch)
    events = list(advisor.stream("e con 4 GPU?", thread_id=thread))
    assert events[-1]["type"] == "final" and events[-1]["result"]["offers"]
    assert [event["type"] for event in events].count("progress") >= 2
    assert started == [f"turn-{thread[:8]}"]
