"""Storage faults are survivable and visible: a damaged threads database is set aside and rebuilt with a notice
(conversations lost, never the service), /healthz says when the threads cannot be written, and a read-only
GPU_ADVISOR_HOME falls back to a private folder for every command, as the README documents."""

from __future__ import annotations

import json
import logging
import sqlite3
import sys
from pathlib import Path

import httpx2
import pytest

from agent.service import Advisor
from tests.read_only import read_only_home, run_read_only
from tests.web_server import serve, test_settings
from tools.catalog.query import ensure_db

CLI = [sys.executable, "-c", "from cli.app import run; run()"]
JOB = "LoRA fine-tune of Llama 3 8B, budget 50 dollars"


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The offers database built once from the shipped snapshot."""
    return ensure_db(tmp_path_factory.mktemp("catalog") / "catalog.sqlite")


def damage_pages(path: Path) -> None:
    """Overwrite every page after the first (the header stays valid) with garbage: 'database disk image is
    malformed' on the first read of a table."""
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    data[page:] = b"\xa5" * (len(data) - page)
    path.write_bytes(bytes(data))


def fill_until_full(connection: sqlite3.Connection) -> None:
    """Fill the database until SQLite answers 'database or disk is full' (the file may not grow past its size)."""
    with connection:
        connection.execute("CREATE TABLE filler (pad blob)")
    pages = connection.execute("PRAGMA page_count").fetchone()[0]
    connection.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(sqlite3.OperationalError, match="full"):
        for _ in range(10_000):
            with connection:
                connection.execute("INSERT INTO filler VALUES (zeroblob(4096))")


def threads_with_one_turn(path: Path, catalog: Path) -> None:
    """A threads database holding one conversation, checkpointed into the main file."""
    advisor = Advisor(checkpoint_path=path, db_path=catalog)
    advisor.respond(JOB)
    advisor.store.compact()
    advisor.close()


@pytest.mark.parametrize("damage", ["not_sqlite", "pages"])
def test_a_damaged_threads_database_is_set_aside_and_rebuilt(
    tmp_path: Path, catalog: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "threads.sqlite"
    if damage == "not_sqlite":
        path.write_bytes(b"this is no database " * 500)
    else:
        threads_with_one_turn(path, catalog)
        damage_pages(path)
    before = path.read_bytes()
    with caplog.at_level(logging.WARNING):
        advisor = Advisor(checkpoint_path=path, db_path=catalog)
        try:
            result = advisor.respond(JOB)
            again = advisor.respond("", thread_id=result["thread_id"], changes={"epochs": 2})
        finally:
            advisor.close()
    assert result["offers"] and again["spec"]["epochs"] == 2 and again["spec"]["model"] == result["spec"]["model"]
    kept = sorted(tmp_path.glob("threads.sqlite.damaged-*"))
    assert [p.name for p in kept if "-wal" not in p.name and "-shm" not in p.name], list(tmp_path.iterdir())
    assert kept[0].read_bytes() == before  # set aside, never deleted
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    notices = [r.getMessage() for r in caplog.records if "damaged" in r.getMessage()]
    assert notices and kept[0].name in notices[0] and "\n" not in notices[0]


def test_a_server_on_a_damaged_threads_database_answers_and_says_nothing_is_lost_but_conversations(
    tmp_path: Path, catalog: Path
) -> None:
    path = tmp_path / "threads.sqlite"
    threads_with_one_turn(path, catalog)
    damage_pages(path)
    with serve(test_settings(tmp_path, catalog)) as running, httpx2.Client(base_url=running.url, timeout=60) as http:
        assert http.get("/healthz").json()["storage"] is True
        faq = http.post("/api/chat", json={"message": "posso usare le spot in generale?"})
        job = http.post("/api/chat", json={"message": JOB})
    assert faq.status_code == 200 and job.status_code == 200 and job.json()["offers"]
    assert list(tmp_path.glob("threads.sqlite.damaged-*"))


def test_healthz_reports_threads_that_cannot_be_written(tmp_path: Path, catalog: Path) -> None:
    with serve(test_settings(tmp_path, catalog)) as running, httpx2.Client(base_url=running.url, timeout=60) as http:
        assert http.post("/api/chat", json={"message": JOB}).status_code == 200
        ok = http.get("/healthz")
        assert ok.status_code == 200 and ok.json()["storage"] is True
        connection = running.app.state.resources.advisor.store._connection
        fill_until_full(connection)
        try:
            full = http.get("/healthz")
        finally:
            connection.execute("PRAGMA max_page_count = 1073741823")
            with connection:
                connection.execute("DROP TABLE filler")
        assert full.status_code == 503, full.text
        body = full.json()
        assert body["status"] == "unavailable" and body["storage"] is False and body["advisor"] is True
        assert "full" in body["reason"] and "\n" not in body["reason"]
        assert http.get("/healthz").status_code == 200  # readiness comes back with the space


# ------------------------------------------------------------------------------------------- read-only home


def _assert_notes_only(stderr: str) -> None:
    """Notices are single lines, never a traceback or an internal error."""
    assert "Traceback" not in stderr and "internal error" not in stderr and "error:" not in stderr, stderr


def test_read_only_home_recommend_and_chat_fall_back_to_a_private_folder(tmp_path: Path) -> None:
    home, env = read_only_home(tmp_path)
    recommend = run_read_only(home, [*CLI, "recommend", "--json", JOB], env=env)
    assert recommend.returncode == 0, recommend.stderr
    _assert_notes_only(recommend.stderr)
    assert json.loads(recommend.stdout)["offers"]
    assert "threads" in recommend.stderr and str(tmp_path / "tmp") in recommend.stderr
    chat = run_read_only(home, [*CLI, "chat", "--json"], env=env, input_text=f"{JOB}\nmake it 2 GPUs\nexit\n")
    assert chat.returncode == 0, chat.stderr
    _assert_notes_only(chat.stderr)
    turns = [json.loads(line) for line in chat.stdout.splitlines() if line.strip()]
    assert len(turns) == 2 and turns[1]["spec"]["num_gpus"] == 2 and turns[1]["spec"]["model"] == "llama-3-8b"
    assert list(home.iterdir()) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["ask", "--json", "posso usare le spot?"],
        ["estimate", "--model", "llama-3.1-8b", "--method", "qlora", "--gpu", "L4", "--json"],
        ["parse", "--json", JOB],
        ["threads", "stats", "--json"],
    ],
)
def test_read_only_home_other_commands_work(tmp_path: Path, argv: list[str]) -> None:
    home, env = read_only_home(tmp_path)
    done = run_read_only(home, [*CLI, *argv], env=env)
    assert done.returncode == 0, done.stderr
    _assert_notes_only(done.stderr)
    json.loads(done.stdout)
