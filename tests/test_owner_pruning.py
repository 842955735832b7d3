"""Owner rows of threads whose first turn never saved a checkpoint (the turn failed after the server minted the id
and token) are pruned with the idle threads — by `gpu-advisor threads prune` and by retention in the store — on
SQLite and on a real PostgreSQL; a thread with a conversation, and a fresh ownerless row, are kept."""

from __future__ import annotations

import json
import time

import pytest

from agent.service import Advisor
from agent.threads import open_thread_store
from agent.threads.retention import prune_threads
from cli.app import main
from tests.pg_server import fresh_database, postgres_url  # noqa: F401 - the fixture
from web.thread_access import open_thread

JOB = "LoRA fine-tune of Mistral 7B, budget 40 dollars"


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    """No LLM, no PostgreSQL from the environment, a private data dir."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GPU_ADVISOR_DATABASE_URL", "GPU_ADVISOR_THREAD_RETENTION_DAYS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))


def owned_threads(advisor: Advisor) -> tuple[str, str]:
    """(a thread whose first turn failed: owner row, no checkpoint; a thread with an owner and a conversation)."""
    failed = open_thread(advisor.store, None, None, None).thread_id  # what the server does before the turn runs
    answered = open_thread(advisor.store, None, None, None).thread_id
    advisor.respond(JOB, thread_id=answered)
    return failed, answered


def test_threads_prune_removes_owner_rows_of_failed_turns_on_sqlite(tmp_path, capsys):
    advisor = Advisor(db_path=tmp_path / "catalog.sqlite", retention_days=0)
    failed, answered = owned_threads(advisor)
    advisor.close()
    time.sleep(1.1)
    store = open_thread_store(tmp_path / "threads.sqlite")
    newer_failure = open_thread(store, None, None, None).thread_id  # too young to prune
    store.close()
    assert main(["threads", "prune", "--older-than", "1s", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    store = open_thread_store(tmp_path / "threads.sqlite")
    try:
        assert store.owner(failed) is None  # pruned
        assert store.owner(answered) is None and store.counts() == (0, 0)  # idle conversation pruned as before
        assert store.owner(newer_failure) is not None  # younger than the cutoff: kept
        assert result["removed"] == 2
    finally:
        store.close()


def test_retention_keeps_a_conversation_and_prunes_only_the_dead_owner_row(tmp_path):
    advisor = Advisor(db_path=tmp_path / "catalog.sqlite", retention_days=0)
    failed, answered = owned_threads(advisor)
    time.sleep(0.3)
    advisor.respond("", thread_id=answered, changes={"epochs": 2})  # the conversation is active
    assert prune_threads(advisor.store, older_than_s=0.2) == [failed]
    assert advisor.store.owner(failed) is None and advisor.store.owner(answered) is not None
    advisor.close()


def test_postgres_store_prunes_owner_rows_of_failed_turns(postgres_url, tmp_path):  # noqa: F811
    url = fresh_database(postgres_url)
    advisor = Advisor(db_path=tmp_path / "catalog.sqlite", database_url=url, retention_days=0)
    try:
        failed, answered = owned_threads(advisor)
        time.sleep(0.3)
        advisor.respond("", thread_id=answered, changes={"epochs": 2})
        assert prune_threads(advisor.store, older_than_s=0.2) == [failed]
        assert advisor.store.owner(failed) is None and advisor.store.owner(answered) is not None
    finally:
        advisor.close()
