"""Threads in PostgreSQL: LangGraph's PostgresSaver (one small checkpoint per turn) on a connection pool, and
advisory locks that serialise a thread's turns across every server sharing the database."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from agent.locks import AdvisoryTurnLocks, advisory_lock, thread_key

SAVER_POOL_SIZE = 8
LOCK_POOL_SIZE = 32
"""Turns of one process that may hold a thread lock at once (each holds a connection; the web server runs at most
32 turns at a time). Turns of one thread wait inside the process first, holding no connection."""
CONNECT_TIMEOUT_S = 10.0
LOCK_WAIT_S = 120.0
"""How long a turn may wait for a lock connection when every one is busy (long LLM turns)."""
SETUP_LOCK_NAME = "gpu-advisor:setup"


def redacted(url: str) -> str:
    """The URL without its password (for messages and logs)."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        info = conninfo_to_dict(url)
    except Exception:  # noqa: BLE001 - an unreadable URL is described, never echoed
        return "the configured PostgreSQL URL"
    return f"postgresql://{info.get('user', '')}@{info.get('host', 'localhost')}:{info.get('port', 5432)}/" \
           f"{info.get('dbname', '')}"


def check_connection(url: str) -> None:
    """ValueError (one line, password left out) unless the PostgreSQL server at `url` answers a query."""
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=int(CONNECT_TIMEOUT_S)) as connection:
            connection.execute("SELECT 1")
    except psycopg.Error as error:
        reason = " ".join(str(error).split()).replace(url, "<url>")[:300]
        raise ValueError(f"cannot use the PostgreSQL database {redacted(url)}: {reason}") from None


class TrimmedPostgresSaver(PostgresSaver):
    """PostgresSaver keeping one small checkpoint per turn (see agent.threads.CarryOverOnly)."""

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        """Save the trimmed checkpoint."""
        from agent.threads import trimmed

        return super().put(config, trimmed(checkpoint), metadata, new_versions)

    def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        """Drop pending writes (a turn is saved whole at its end)."""


def open_pool(url: str, *, max_size: int, name: str, wait_s: float = CONNECT_TIMEOUT_S) -> ConnectionPool:
    """An open autocommit pool (dict rows, no prepared statements); fails within CONNECT_TIMEOUT_S when the server is
    unreachable; a caller waits up to `wait_s` for a free connection."""
    pool = ConnectionPool(url, min_size=1, max_size=max_size, open=False, name=name, timeout=wait_s,
                          kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row,
                                  "connect_timeout": int(CONNECT_TIMEOUT_S)})
    pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
    return pool


def run_setup_once(pool: ConnectionPool, setup: Any) -> None:
    """Run a schema setup while holding a database-wide advisory lock (servers starting together do not race)."""
    with pool.connection() as connection, advisory_lock(connection, thread_key(SETUP_LOCK_NAME)):
        setup()


class PostgresThreadStore:
    """Threads, their locks and their pruning in one PostgreSQL database."""

    def __init__(self, url: str) -> None:
        """Connect (two pools: checkpoints, locks) and create the checkpoint tables when missing."""
        self._pool = open_pool(url, max_size=SAVER_POOL_SIZE, name="gpu-advisor-threads")
        try:
            self._lock_pool = open_pool(url, max_size=LOCK_POOL_SIZE, name="gpu-advisor-thread-locks",
                                        wait_s=LOCK_WAIT_S)
        except Exception:
            self._pool.close()
            raise
        self.saver: BaseCheckpointSaver = TrimmedPostgresSaver(self._pool)  # type: ignore[arg-type]
        run_setup_once(self._lock_pool, self.saver.setup)  # type: ignore[attr-defined]
        self._locks = AdvisoryTurnLocks(self._lock_pool)

    def turn_lock(self, thread_id: str) -> AbstractContextManager[None]:
        """The database-wide lock of one thread."""
        return self._locks.hold(thread_id)

    def last_activity(self) -> Iterator[tuple[str, str]]:
        """(thread id, newest checkpoint id) per thread."""
        with self._pool.connection() as connection:
            rows = connection.execute("SELECT thread_id, max(checkpoint_id) AS newest FROM checkpoints "
                                      "GROUP BY thread_id").fetchall()
        for row in rows:
            yield row["thread_id"], row["newest"]

    def delete_thread(self, thread_id: str) -> None:
        """Delete the thread's checkpoints, blobs and writes."""
        self.saver.delete_thread(thread_id)

    def counts(self) -> tuple[int, int]:
        """(threads, checkpoints) stored."""
        with self._pool.connection() as connection:
            row = connection.execute("SELECT count(DISTINCT thread_id) AS threads, count(*) AS checkpoints "
                                     "FROM checkpoints").fetchone()
        return int(row["threads"]), int(row["checkpoints"])

    def compact(self) -> None:
        """Nothing to do: PostgreSQL's autovacuum reuses the space of deleted rows."""

    def size_bytes(self) -> int | None:
        """Bytes of the checkpoint tables with their indexes and TOAST."""
        with self._pool.connection() as connection:
            row = connection.execute(
                "SELECT sum(pg_total_relation_size(c)) AS size FROM unnest(ARRAY['checkpoints', "
                "'checkpoint_blobs', 'checkpoint_writes']::regclass[]) AS c").fetchone()
        return int(row["size"]) if row and row["size"] is not None else None

    def close(self) -> None:
        """Close both pools (closing twice is harmless)."""
        self._lock_pool.close()
        self._pool.close()
