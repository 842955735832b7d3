"""Thread storage: one small checkpoint per turn (only what the next turn needs), retention, `threads prune`."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from agent.service import Advisor
from agent.threads import retention
from agent.threads.base import carried_keys
from agent.threads.retention import configured_retention_days, prune_threads
from agent.threads.sqlite import SqliteThreadStore
from cli.app import main

TURNS = [
    "QLoRA su Llama 3 70B, budget 300 euro, vanno bene le spot?",
    "e con 4 GPU?",
    "LoRA pada Mistral 7B, 10 ribu contoh, anggaran 2 juta rupiah",
    "kalau pakai QLoRA?",
    "Full fine-tune Llama 3.1 8B on 100M tokens within 24 hours, no spot",
    "and with 8 GPUs?",
    "can I use spot instances for fine-tuning?",
    "pretraining GPT-2 small from scratch on 10B tokens",
]
MAX_BYTES_PER_TURN = 10_000


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    """No LLM, no PostgreSQL from the environment, a private data dir."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GPU_ADVISOR_DATABASE_URL", "GPU_ADVISOR_THREAD_RETENTION_DAYS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))


def _disk_bytes(path) -> int:
    """The SQLite file and its WAL (not the -shm index, a 32 KiB shared-memory file that stays until the last
    connection closes, whatever the turns stored: counting it made this test flip on a page of the file)."""
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if not p.name.endswith((".locks", "-shm")))


def test_each_turn_stores_one_checkpoint_of_at_most_10_kb(tmp_path):
    path = tmp_path / "threads.sqlite"
    advisor = Advisor(checkpoint_path=path, db_path=tmp_path / "catalog.sqlite")
    for _ in range(2):
        thread = None
        for text in TURNS:
            thread = advisor.respond(text, thread_id=thread)["thread_id"]
    advisor.close()
    turns = 2 * len(TURNS)
    with sqlite3.connect(path) as connection:
        checkpoints = connection.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
        writes = connection.execute("SELECT count(*) FROM writes").fetchone()[0]
    assert (checkpoints, writes) == (turns, 0)
    assert _disk_bytes(path) / turns <= MAX_BYTES_PER_TURN, f"{_disk_bytes(path) / turns:.0f} bytes per turn"


def test_a_checkpoint_holds_the_job_and_language_not_the_turns_results(tmp_path):
    advisor = Advisor(checkpoint_path=tmp_path / "threads.sqlite", db_path=tmp_path / "catalog.sqlite")
    thread = advisor.respond(TURNS[0])["thread_id"]
    follow_up = advisor.respond(TURNS[1], thread_id=thread)
    saved = advisor.store.saver.get_tuple({"configurable": {"thread_id": thread}}).checkpoint["channel_values"]
    advisor.close()
    assert {"spec", "language", "awaiting_fields"} <= carried_keys()
    assert not carried_keys() & {
        "ranking",
        "estimate",
        "single_gpu_estimate",
        "topology",
        "citations",
        "answer",
        "message",
        "notes",
    }
    assert set(saved) <= carried_keys() and saved["spec"]["method"] == "qlora" and saved["language"] == "it"
    assert follow_up["intent"] == "follow_up" and follow_up["offers"]  # the next turn had all it needed


def test_prune_deletes_only_threads_idle_past_the_cutoff(tmp_path):
    advisor = Advisor(
        checkpoint_path=tmp_path / "threads.sqlite", db_path=tmp_path / "catalog.sqlite", retention_days=0
    )
    old = advisor.respond(TURNS[6])["thread_id"]
    time.sleep(0.3)
    fresh = advisor.respond(TURNS[4])["thread_id"]
    removed = prune_threads(advisor.store, older_than_s=0.2)
    assert removed == [old]
    assert advisor.store.counts() == (1, 1)
    assert advisor.respond("", thread_id=fresh, changes={"epochs": 2})["intent"] == "follow_up"
    advisor.close()


def test_the_advisor_applies_the_retention_setting_in_the_background(tmp_path, monkeypatch):
    monkeypatch.setattr(retention, "PRUNE_EVERY_S", 0.0)
    monkeypatch.setenv("GPU_ADVISOR_THREAD_RETENTION_DAYS", str(0.3 / 86400))
    path = tmp_path / "threads.sqlite"
    advisor = Advisor(checkpoint_path=path, db_path=tmp_path / "catalog.sqlite")
    assert advisor.retention_days == pytest.approx(0.3 / 86400)
    stale = advisor.respond(TURNS[6])["thread_id"]
    time.sleep(0.6)
    advisor.respond(TURNS[6])  # its end starts a pruning run in the background
    advisor.close()  # waits for that run
    store = SqliteThreadStore(path)
    assert store.saver.get_tuple({"configurable": {"thread_id": stale}}) is None
    store.close()


def test_retention_setting_is_checked():
    assert configured_retention_days({}) == 90
    assert configured_retention_days({"GPU_ADVISOR_THREAD_RETENTION_DAYS": "0"}) == 0
    for bad in ("-1", "soon", "nan", "inf"):
        with pytest.raises(ValueError, match="GPU_ADVISOR_THREAD_RETENTION_DAYS"):
            configured_retention_days({"GPU_ADVISOR_THREAD_RETENTION_DAYS": bad})


def test_threads_prune_command_reports_and_frees_space(tmp_path, capsys):
    advisor = Advisor(db_path=tmp_path / "catalog.sqlite")  # default file under GPU_ADVISOR_HOME
    for text in TURNS[:4]:
        advisor.respond(text)
    advisor.close()
    assert main(["threads", "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert (stats["threads"], stats["checkpoints"]) == (4, 4) and stats["store"].endswith("threads.sqlite")
    assert main(["threads", "prune", "--older-than", "1h", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["removed"] == 0
    time.sleep(1.1)
    assert main(["threads", "prune", "--older-than", "1s", "--json"]) == 0
    pruned = json.loads(capsys.readouterr().out)
    assert (pruned["removed"], pruned["kept"]) == (4, 0)
    assert pruned["bytes_after"] < pruned["bytes_before"]


def test_threads_prune_refuses_a_file_that_is_not_a_threads_database(tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("notes\n")
    assert main(["threads", "prune", "--older-than", "1d", "--checkpoints", str(notes)]) == 2
    assert "not a threads database" in capsys.readouterr().err
    assert notes.read_text() == "notes\n"
    assert main(["threads", "prune", "--older-than", "soon"]) == 2
    assert "--older-than" in capsys.readouterr().err
    assert main(["threads", "prune", "--checkpoints", str(tmp_path / "missing.sqlite"), "--older-than", "1d"]) == 2
    assert not (tmp_path / "missing.sqlite").exists()
