"""Past one machine: two stateless `serve` processes on one real PostgreSQL share threads, per-thread turn locks and
rate-limit buckets; a conversation moves between them, racing follow-ups lose nothing, and neither does restarting
a server in the middle of the load."""

from __future__ import annotations

import signal
import threading

import httpx2
import psycopg
import pytest

from agent.service import Advisor
from tests.pg_server import fresh_database, postgres_url  # noqa: F401 - the fixture
from tests.serve_process import (
    FIRST_MESSAGE,
    FOLLOW_UPS,
    LoadStats,
    ServeProcess,
    chat,
    continuing,
    free_port,
    race_follow_ups,
    serve_env,
)
from web.rate_limit.postgres import PostgresTokenBucketLimiter

THREADS = 6
RESTART_THREADS = 10


@pytest.fixture(scope="module")
def database(postgres_url):  # noqa: F811
    """An empty database for this module."""
    return fresh_database(postgres_url)


@pytest.fixture(scope="module")
def servers(database, tmp_path_factory):
    """Two `serve` processes (own data dirs, own ports) on the one database."""
    started = []
    try:
        for name in ("a", "b"):
            env = serve_env(tmp_path_factory.mktemp(f"server-{name}"), GPU_ADVISOR_DATABASE_URL=database)
            started.append(ServeProcess(port=free_port(), env=env).start())
        yield started
    finally:
        for server in started:
            server.stop()


def test_advisor_keeps_one_small_checkpoint_per_turn_in_postgres(database, tmp_path):
    advisor = Advisor(
        checkpoint_path=tmp_path / "unused.sqlite", db_path=tmp_path / "catalog.sqlite", database_url=database
    )
    thread = advisor.respond(FIRST_MESSAGE)["thread_id"]
    advisor.respond("", thread_id=thread, changes={"epochs": 2})
    spec = advisor.respond("spot instances are fine", thread_id=thread)["spec"]
    size = advisor.store.size_bytes()
    advisor.close()
    assert spec["method"] == "lora" and spec["epochs"] == 2
    assert not (tmp_path / "unused.sqlite").exists()
    with psycopg.connect(database) as connection:
        checkpoints = connection.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s", (thread,)).fetchone()[
            0
        ]
        blob_bytes = connection.execute(
            "SELECT coalesce(sum(length(blob)), 0) FROM checkpoint_blobs WHERE thread_id = %s", (thread,)
        ).fetchone()[0]
        writes = connection.execute(
            "SELECT count(*) FROM checkpoint_writes WHERE thread_id = %s", (thread,)
        ).fetchone()[0]
    assert (checkpoints, writes) == (3, 0)
    assert blob_bytes < 3 * 2_000, blob_bytes  # only the job, the language and pending questions are kept
    assert size is not None and size > 0


def test_a_conversation_moves_between_servers(servers):
    first, second = servers
    thread = continuing(chat(first.url, {"message": FIRST_MESSAGE}))
    chat(second.url, {"message": "", **thread, "changes": {"epochs": 3}})
    result = chat(first.url, {"message": "", **thread, "changes": {"seq_len": 2048}})
    assert (result["spec"]["method"], result["spec"]["epochs"], result["spec"]["seq_len"]) == ("lora", 3, 2048)
    assert result["intent"] == "follow_up"
    stranger = httpx2.post(
        f"{second.url}/api/chat", timeout=60, json={"message": "and the budget?", "thread_id": thread["thread_id"]}
    )
    assert stranger.status_code == 404 and stranger.json()["error"]["code"] == "thread_not_found"  # owner in PostgreSQL


def test_follow_ups_racing_on_one_thread_across_two_servers_lose_nothing(servers):
    turns, lost = race_follow_ups([server.url for server in servers], THREADS)
    assert not lost, f"{len(lost)} of {THREADS} threads lost an update:\n" + "\n".join(lost)
    print(f"\n2 servers on PostgreSQL: {turns} turns, {THREADS * len(FOLLOW_UPS)} racing follow-ups, 0 lost")


def test_killing_and_restarting_a_server_mid_load_loses_nothing(servers):
    first, second = servers
    stats = LoadStats()
    restarted = threading.Event()
    restart_at = RESTART_THREADS * len(FOLLOW_UPS) // 4

    def restart_when_a_quarter_is_done(answered: int) -> None:
        """Kill the first server (kill -9: turns in flight die holding thread locks, which PostgreSQL releases with
        the connections) and start it again on its port, once a quarter of the load is done."""
        if answered == restart_at:
            threading.Thread(
                target=lambda: (first.stop(signal.SIGKILL), first.start(), restarted.set()), daemon=True
            ).start()

    turns, lost = race_follow_ups(
        [first.url, second.url], RESTART_THREADS, retries=60, stats=stats, on_answer=restart_when_a_quarter_is_done
    )
    assert restarted.wait(120), "the first server did not come back"
    assert not lost, f"{len(lost)} of {RESTART_THREADS} threads lost an update:\n" + "\n".join(lost)
    assert chat(first.url, {"message": FIRST_MESSAGE})["intent"] == "job_request"  # it serves again
    print(f"\nkill -9 and restart mid-load: {turns} turns, {stats.failovers} requests failed over, 0 lost")


def test_two_servers_share_one_rate_limit_bucket_per_client(database):
    limiters = [PostgresTokenBucketLimiter(database, per_minute=1, burst=3) for _ in range(2)]
    try:
        outcomes = [limiters[i % 2].acquire("203.0.113.9") for i in range(5)]
        assert outcomes[:3] == [None, None, None]
        assert all(wait is not None and 0 < wait <= 60 for wait in outcomes[3:])
        assert limiters[1].acquire("198.51.100.1") is None  # another client has its own bucket
        with psycopg.connect(database, autocommit=True) as connection:
            connection.execute("DROP TABLE gpu_advisor_rate_buckets")  # the database breaks under the servers
        assert limiters[0].acquire("203.0.113.9") is None  # allowed and logged, never a 500
    finally:
        for limiter in limiters:
            limiter.close()
