"""Start in any order: processes that create gpu-advisor's PostgreSQL schema at the same instant on a fresh database
all finish (the audit saw two servers hang in 3 of 6 tries, `serve --workers 4` in 2 of 2), and a second set-up
changes nothing."""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import pytest

from agent.threads.postgres import PostgresThreadStore
from tests.pg_server import fresh_database, postgres_url  # noqa: F401 - the fixture
from tests.serve_process import ServeProcess, chat, continuing, free_port, serve_env
from web.rate_limit.postgres import PostgresTokenBucketLimiter
from web.slack.store.postgres import PostgresSlackStore

ROUNDS = 10
STARTERS = 3
HANG_GUARD_S = 60.0
"""Not a speed target: a set-up that has not finished after this long is deadlocked (the audit's hangs lasted until
killed); the test then ends the stuck sessions so that it can report instead of hanging."""


def _open_everything(url: str) -> None:
    """What a starting server opens on PostgreSQL: the rate-limit buckets, the thread store, the Slack store."""
    limiter = PostgresTokenBucketLimiter(url, per_minute=60, burst=5)
    store = PostgresThreadStore(url)
    slack = PostgresSlackStore(url)
    for part in (slack, store, limiter):
        part.close()


def _terminate_sessions(url: str) -> None:
    """End every other session on the database of `url` (frees deadlocked set-ups)."""
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as connection:
        connection.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        )


def _race(url: str, starters: int) -> tuple[int, list[str]]:
    """Open everything from `starters` threads released together; returns (finished, errors)."""
    barrier = threading.Barrier(starters)
    errors: list[str] = []

    def start() -> None:
        """One starter."""
        barrier.wait()
        try:
            _open_everything(url)
        except Exception as error:
            errors.append(f"{type(error).__name__}: {error}"[:300])

    workers = [threading.Thread(target=start, daemon=True) for _ in range(starters)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(HANG_GUARD_S)
    hung = sum(worker.is_alive() for worker in workers)
    if hung:
        _terminate_sessions(url)
        for worker in workers:
            worker.join(HANG_GUARD_S)
    return starters - hung, errors


def _schema(url: str) -> list[tuple[str, ...]]:
    """Tables, indexes and applied LangGraph migrations of a database."""
    with psycopg.connect(url) as connection:
        names = connection.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' UNION ALL "
            "SELECT indexname FROM pg_indexes WHERE schemaname = 'public' "
            "ORDER BY 1"
        ).fetchall()
        versions = connection.execute("SELECT v::text FROM checkpoint_migrations ORDER BY v").fetchall()
    return [*names, ("migrations",), *versions]


def test_set_ups_racing_on_a_fresh_database_all_finish(postgres_url):  # noqa: F811
    for done in range(ROUNDS):
        finished, errors = _race(fresh_database(postgres_url), STARTERS)
        assert (finished, errors) == (STARTERS, []), f"round {done + 1}: {STARTERS - finished} set-ups hung, {errors}"
    print(f"\n{ROUNDS}/{ROUNDS} rounds of {STARTERS} set-ups racing on a fresh database finished")


def test_set_up_is_idempotent_and_leaves_langgraph_nothing_to_migrate(postgres_url):  # noqa: F811
    from langgraph.checkpoint.postgres.base import MIGRATIONS

    url = fresh_database(postgres_url)
    _open_everything(url)
    first = _schema(url)
    _open_everything(url)
    assert _schema(url) == first
    assert first[first.index(("migrations",)) + 1 :] == [(str(v),) for v in range(len(MIGRATIONS))]
    for index in ("checkpoints_thread_id_idx", "checkpoint_blobs_thread_id_idx", "checkpoint_writes_thread_id_idx"):
        assert (index,) in first
    with psycopg.connect(url) as connection:
        invalid = connection.execute("SELECT count(*) FROM pg_index WHERE NOT indisvalid").fetchone()[0]
    assert invalid == 0


@pytest.mark.parametrize("workers_server", [4])
def test_three_servers_and_a_four_worker_server_started_together_all_serve(
    postgres_url,  # noqa: F811
    tmp_path: Path,
    workers_server: int,
):
    url = fresh_database(postgres_url)
    servers = [
        ServeProcess(port=free_port(), env=serve_env(tmp_path / f"s{i}", GPU_ADVISOR_DATABASE_URL=url))
        for i in range(3)
    ]
    servers.append(
        ServeProcess(
            port=free_port(), workers=workers_server, env=serve_env(tmp_path / "w", GPU_ADVISOR_DATABASE_URL=url)
        )
    )
    errors: list[str] = []

    def start(server: ServeProcess) -> None:
        """Start one server (ServeProcess.start gives up after its own deadline)."""
        try:
            server.start()
        except RuntimeError as error:
            errors.append(str(error)[-500:])

    starters = [threading.Thread(target=start, args=(server,)) for server in servers]
    try:
        for starter in starters:
            starter.start()
        for starter in starters:
            starter.join()
        assert not errors, errors
        thread = continuing(chat(servers[0].url, {"message": "LoRA fine-tune of Llama 3 8B"}))
        for server in servers[1:]:
            chat(server.url, {"message": "", **thread, "changes": {"epochs": 2}})
    finally:
        for server in servers:
            server.stop()
