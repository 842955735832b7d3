"""Threads in PostgreSQL: LangGraph's PostgresSaver (one small checkpoint per turn) on a connection pool, and
advisory locks that serialise a thread's turns across every server sharing the database."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from agent.threads.base import OWNERS_SCHEMA, OWNERS_TABLE
from agent.threads.locks import AdvisoryTurnLocks, thread_key

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
    except Exception:
        return "the configured PostgreSQL URL"
    return (
        f"postgresql://{info.get('user', '')}@{info.get('host', 'localhost')}:{info.get('port', 5432)}/"
        f"{info.get('dbname', '')}"
    )


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
    """PostgresSaver keeping one small checkpoint per turn (see agent.threads.base.CarryOverOnly)."""

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        """Save the trimmed checkpoint."""
        from agent.threads.base import trimmed

        return super().put(config, trimmed(checkpoint), metadata, new_versions)

    def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        """Drop pending writes (a turn is saved whole at its end)."""


def open_pool(url: str, *, max_size: int, name: str, wait_s: float = CONNECT_TIMEOUT_S) -> ConnectionPool:
    """An open autocommit pool (dict rows, no prepared statements); fails within CONNECT_TIMEOUT_S when the server is
    unreachable; a caller waits up to `wait_s` for a free connection."""
    pool = ConnectionPool(
        url,
        min_size=1,
        max_size=max_size,
        open=False,
        name=name,
        timeout=wait_s,
        kwargs={
            "autocommit": True,
            "prepare_threshold": 0,
            "row_factory": dict_row,
            "connect_timeout": int(CONNECT_TIMEOUT_S),
        },
    )
    pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
    return pool


def run_setup_once(pool: ConnectionPool, setup: Callable[[Any], None], *, needed: Callable[[Any], bool]) -> None:
    """Create a schema when `needed(connection)` says so: in one transaction holding a transaction-level advisory
    lock, so servers starting together run it one after the other, and nothing inside waits on another session
    (no CREATE INDEX CONCURRENTLY, no second connection): PostgreSQL sees every wait, and a stopped server's
    transaction is rolled back with its connection. `needed` is asked first without the lock (nothing to do on
    every later start), then again under it."""
    with pool.connection() as connection:
        if not needed(connection):
            return
        with connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (thread_key(SETUP_LOCK_NAME),))
            if needed(connection):
                setup(connection)


def missing_relations(*names: str) -> Callable[[Any], bool]:
    """A `needed` check for run_setup_once: whether any of these tables or indexes does not exist yet."""

    def needed(connection: Any) -> bool:
        """True while a relation is missing."""
        row = connection.execute(
            "SELECT bool_or(to_regclass(name) IS NULL) AS missing FROM unnest(%s::text[]) AS name", (list(names),)
        ).fetchone()
        return bool(row["missing"])

    return needed


def in_one_transaction(statement: str) -> str:
    """A LangGraph migration made fit for a transaction block: CREATE INDEX without CONCURRENTLY (the tables are
    new or small when it runs; a plain build blocks writes to that table only while it runs)."""
    return re.sub(r"\bCONCURRENTLY\s+", "", statement, flags=re.IGNORECASE)


def checkpoint_migrations_pending(migrations: Sequence[str]) -> Callable[[Any], bool]:
    """A `needed` check: whether LangGraph's checkpoint migrations are not all applied."""

    def needed(connection: Any) -> bool:
        """True while the migrations table is missing or behind."""
        if connection.execute("SELECT to_regclass('checkpoint_migrations') IS NULL AS absent").fetchone()["absent"]:
            return True
        row = connection.execute("SELECT max(v) AS v FROM checkpoint_migrations").fetchone()
        return row["v"] is None or row["v"] < len(migrations) - 1

    return needed


def apply_checkpoint_migrations(migrations: Sequence[str]) -> Callable[[Any], None]:
    """LangGraph's PostgresSaver.setup() on one connection inside the caller's transaction: the same migrations and
    version rows, without CONCURRENTLY (which cannot run in a transaction and waits for every other session)."""

    def setup(connection: Any) -> None:
        """Apply the pending migrations and record their versions."""
        connection.execute(migrations[0])
        row = connection.execute("SELECT max(v) AS v FROM checkpoint_migrations").fetchone()
        done = -1 if row["v"] is None else int(row["v"])
        for version in range(done + 1, len(migrations)):
            connection.execute(in_one_transaction(migrations[version]))
            connection.execute("INSERT INTO checkpoint_migrations (v) VALUES (%s)", (version,))

    return setup


class PostgresThreadStore:
    """Threads, their locks and their pruning in one PostgreSQL database."""

    def __init__(self, url: str) -> None:
        """Connect (two pools: checkpoints, locks) and create the checkpoint tables when missing."""
        self._pool = open_pool(url, max_size=SAVER_POOL_SIZE, name="gpu-advisor-threads")
        try:
            self._lock_pool = open_pool(
                url, max_size=LOCK_POOL_SIZE, name="gpu-advisor-thread-locks", wait_s=LOCK_WAIT_S
            )
        except Exception:
            self._pool.close()
            raise
        self.saver: BaseCheckpointSaver = TrimmedPostgresSaver(self._pool)  # type: ignore[arg-type]
        migrations = TrimmedPostgresSaver.MIGRATIONS
        try:
            run_setup_once(
                self._pool, apply_checkpoint_migrations(migrations), needed=checkpoint_migrations_pending(migrations)
            )
            run_setup_once(
                self._pool, lambda connection: connection.execute(OWNERS_SCHEMA), needed=missing_relations(OWNERS_TABLE)
            )
        except Exception:
            self.close()
            raise
        self._locks = AdvisoryTurnLocks(self._lock_pool)

    def turn_lock(self, thread_id: str) -> AbstractContextManager[None]:
        """The database-wide lock of one thread."""
        return self._locks.hold(thread_id)

    def last_activity(self) -> Iterator[tuple[str, str]]:
        """(thread id, newest checkpoint id) per thread."""
        with self._pool.connection() as connection:
            rows = connection.execute(
                "SELECT thread_id, max(checkpoint_id) AS newest FROM checkpoints GROUP BY thread_id"
            ).fetchall()
        for row in rows:
            yield row["thread_id"], row["newest"]

    def delete_thread(self, thread_id: str) -> None:
        """Delete the thread's checkpoints, blobs, writes and owner."""
        self.saver.delete_thread(thread_id)
        with self._pool.connection() as connection:
            connection.execute(f"DELETE FROM {OWNERS_TABLE} WHERE thread_id = %s", (thread_id,))

    def set_owner(self, thread_id: str, token_sha256: str, key_sha256: str | None) -> None:
        """Record the owner of a new thread."""
        with self._pool.connection() as connection:
            connection.execute(
                f"INSERT INTO {OWNERS_TABLE} VALUES (%s, %s, %s, %s)",
                (thread_id, token_sha256, key_sha256, time.time()),
            )

    def owner(self, thread_id: str) -> tuple[str, str | None] | None:
        """The owner digests of a thread, if it has an owner."""
        with self._pool.connection() as connection:
            row = connection.execute(
                f"SELECT token_sha256, key_sha256 FROM {OWNERS_TABLE} WHERE thread_id = %s", (thread_id,)
            ).fetchone()
        return (row["token_sha256"], row["key_sha256"]) if row else None

    def unsaved_owners(self, created_before: float) -> list[str]:
        """Owner rows older than `created_before` whose thread never saved a checkpoint."""
        with self._pool.connection() as connection:
            rows = connection.execute(
                f"SELECT thread_id FROM {OWNERS_TABLE} AS o WHERE created_at < %s AND NOT "
                "EXISTS (SELECT 1 FROM checkpoints AS c WHERE c.thread_id = o.thread_id)",
                (created_before,),
            ).fetchall()
        return [row["thread_id"] for row in rows]

    def counts(self) -> tuple[int, int]:
        """(threads, checkpoints) stored."""
        with self._pool.connection() as connection:
            row = connection.execute(
                "SELECT count(DISTINCT thread_id) AS threads, count(*) AS checkpoints FROM checkpoints"
            ).fetchone()
        return int(row["threads"]), int(row["checkpoints"])

    def compact(self) -> None:
        """Nothing to do: PostgreSQL's autovacuum reuses the space of deleted rows."""

    def unwritable(self) -> str | None:
        """Why a turn could not be saved now (the server unreachable, a read-only standby), None when it can."""
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            with self._pool.connection() as connection:
                row = connection.execute(
                    "SELECT pg_is_in_recovery() AS standby, "
                    "current_setting('transaction_read_only') = 'on' AS read_only"
                ).fetchone()
        except (psycopg.Error, PoolTimeout) as error:
            return f"cannot reach the threads database: {type(error).__name__}"
        if row["standby"] or row["read_only"]:
            return "the threads database is read-only (a standby or default_transaction_read_only)"
        return None

    def size_bytes(self) -> int | None:
        """Bytes of the checkpoint tables with their indexes and TOAST."""
        with self._pool.connection() as connection:
            row = connection.execute(
                "SELECT sum(pg_total_relation_size(c)) AS size FROM unnest(ARRAY['checkpoints', "
                "'checkpoint_blobs', 'checkpoint_writes']::regclass[]) AS c"
            ).fetchone()
        return int(row["size"]) if row and row["size"] is not None else None

    def close(self) -> None:
        """Close both pools (closing twice is harmless)."""
        self._lock_pool.close()
        self._pool.close()
