"""Where conversation threads live: a LangGraph checkpointer that keeps one small checkpoint per turn, a per-thread
turn lock that holds across processes (pruning by age: agent/retention.py). SQLite (embedded default) or PostgreSQL (shared by any
number of servers, see agent/threads_postgres.py)."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from agent.locks import FileTurnLocks

DATABASE_URL_VAR = "GPU_ADVISOR_DATABASE_URL"
"""postgresql://… : threads (and the web server's shared state) live in PostgreSQL instead of SQLite files."""
TURN_INPUTS = frozenset({"message", "explicit_language", "changes", "prefer"})
"""State keys every turn sets from its input."""
SQLITE_BUSY_TIMEOUT_S = 30.0
OWNERS_TABLE = "gpu_advisor_thread_owners"
"""Who may continue a thread started over HTTP (digests of its capability token and of the API key that created
it; web/thread_access.py). Threads of the CLI and Slack have no row: only those surfaces reach them."""
PROBE_TABLE = "gpu_advisor_write_probe"
PROBE_BYTES = 16_384
"""What the readiness check writes (and removes): a few new pages, as a turn's checkpoint needs."""
OWNERS_SCHEMA = (f"CREATE TABLE IF NOT EXISTS {OWNERS_TABLE} (thread_id text PRIMARY KEY, token_sha256 text NOT NULL, "
                 "key_sha256 text, created_at double precision NOT NULL)")


@cache
def carried_keys() -> frozenset[str]:
    """The state keys the next turn needs: every key the graph does not reset per turn and the input does not set."""
    from agent.graph import PER_TURN_RESET
    from agent.state import AgentState

    return frozenset(AgentState.__annotations__) - set(PER_TURN_RESET) - TURN_INPUTS - {"supported"}


def trimmed(checkpoint: Any) -> Any:
    """The checkpoint with only the carried-over values (offers, estimates and answers are per turn)."""
    keep = carried_keys()
    values = {key: value for key, value in checkpoint["channel_values"].items() if key in keep}
    return {**checkpoint, "channel_values": values}


class CarryOverOnly:
    """Checkpointer mixin: save only what the next turn needs, and no intermediate writes (with durability='exit'
    the graph saves one checkpoint when the turn ends)."""

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        """Save the trimmed checkpoint."""
        return super().put(config, trimmed(checkpoint), metadata, new_versions)  # type: ignore[misc]

    def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
        """Drop pending writes: a turn is saved whole at its end, or (when it failed) not continued."""


class TrimmedSqliteSaver(CarryOverOnly, SqliteSaver):
    """SqliteSaver keeping one small checkpoint per turn."""


class ThreadStore(Protocol):
    """What the advisor needs from thread storage."""

    saver: BaseCheckpointSaver

    def turn_lock(self, thread_id: str) -> AbstractContextManager[None]:
        """Serialise turns of one thread across threads, processes and (PostgreSQL) machines."""

    def last_activity(self) -> Iterator[tuple[str, str]]:
        """(thread id, newest checkpoint id) of every thread."""

    def delete_thread(self, thread_id: str) -> None:
        """Forget a thread."""

    def set_owner(self, thread_id: str, token_sha256: str, key_sha256: str | None) -> None:
        """Record who owns a new thread (its token's digest, and the creating API key's)."""

    def owner(self, thread_id: str) -> tuple[str, str | None] | None:
        """(token digest, key digest) of a thread started over HTTP, None for any other id."""

    def unsaved_owners(self, created_before: float) -> list[str]:
        """Threads owned since before `created_before` (Unix time) that have no checkpoint: their first turn failed."""

    def size_bytes(self) -> int | None:
        """Bytes the threads take on disk, when known."""

    def counts(self) -> tuple[int, int]:
        """(threads, checkpoints) stored."""

    def compact(self) -> None:
        """Give the space of deleted threads back (SQLite VACUUM; PostgreSQL's autovacuum does it there)."""

    def unwritable(self) -> str | None:
        """Why a turn could not be saved now (one line), None when it can (the readiness check)."""

    def close(self) -> None:
        """Release connections and files."""


class SqliteThreadStore:
    """Threads in one SQLite file (WAL), turn locks in a byte-range lock file next to it."""

    def __init__(self, path: Path) -> None:
        """Open (creating) the threads database at `path` (agent/threads_open.py repairs or relocates it)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._connection = sqlite3.connect(str(path), check_same_thread=False, timeout=SQLITE_BUSY_TIMEOUT_S)
        try:
            self.saver: BaseCheckpointSaver = TrimmedSqliteSaver(self._connection)
            self.saver.setup()  # type: ignore[attr-defined]  (WAL journal)
            # WAL with synchronous=NORMAL: a turn's commit survives the process being killed (the fault suite kills
            # `serve` with -9) and never corrupts the file; only an OS crash or power loss can undo the last turns.
            # FULL would add an fsync to every turn (most of the checkpoint's cost, issue 14).
            self._connection.execute("PRAGMA synchronous=NORMAL")
            self._locks = FileTurnLocks(path.with_name(path.name + ".locks"))
        except BaseException:
            self._connection.close()
            raise

    def damage(self) -> str | None:
        """What SQLite's quick check finds wrong with the file (first problem), None when it is sound."""
        with self.saver.lock:  # type: ignore[attr-defined]
            row = self._connection.execute("PRAGMA quick_check(1)").fetchone()
        return None if row and row[0] == "ok" else str(row[0] if row else "no answer")

    def unwritable(self) -> str | None:
        """Why a turn could not be saved now (a write of a few pages, committed and removed), None when it can."""
        try:
            with self.saver.lock, self._connection:  # type: ignore[attr-defined]
                self._connection.execute(f"CREATE TABLE IF NOT EXISTS {PROBE_TABLE} (at real, pad blob)")
                self._connection.execute(f"INSERT INTO {PROBE_TABLE} VALUES (?, zeroblob(?))",
                                         (time.time(), PROBE_BYTES))
            with self.saver.lock, self._connection:  # type: ignore[attr-defined]
                self._connection.execute(f"DELETE FROM {PROBE_TABLE}")
        except sqlite3.Error as error:
            return f"cannot write the threads database {self.path.name}: {' '.join(str(error).split())}"
        return None

    def turn_lock(self, thread_id: str) -> AbstractContextManager[None]:
        """The cross-process lock of one thread."""
        return self._locks.hold(thread_id)

    def last_activity(self) -> Iterator[tuple[str, str]]:
        """(thread id, newest checkpoint id) per thread."""
        with self.saver.lock:  # type: ignore[attr-defined]
            rows = self._connection.execute(
                "SELECT thread_id, max(checkpoint_id) FROM checkpoints GROUP BY thread_id").fetchall()
        yield from rows

    def delete_thread(self, thread_id: str) -> None:
        """Delete the thread's checkpoints and its owner."""
        self.saver.delete_thread(thread_id)
        if self._has_owners():
            with self.saver.lock, self._connection:  # type: ignore[attr-defined]
                self._connection.execute(f"DELETE FROM {OWNERS_TABLE} WHERE thread_id = ?", (thread_id,))

    def _has_owners(self) -> bool:
        """Whether the owners table exists (it is created by the first thread started over HTTP)."""
        with self.saver.lock:  # type: ignore[attr-defined]
            return self._connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                                            (OWNERS_TABLE,)).fetchone() is not None

    def set_owner(self, thread_id: str, token_sha256: str, key_sha256: str | None) -> None:
        """Record the owner of a new thread."""
        with self.saver.lock, self._connection:  # type: ignore[attr-defined]
            self._connection.execute(OWNERS_SCHEMA)
            self._connection.execute(f"INSERT INTO {OWNERS_TABLE} VALUES (?, ?, ?, ?)",
                                     (thread_id, token_sha256, key_sha256, time.time()))

    def owner(self, thread_id: str) -> tuple[str, str | None] | None:
        """The owner digests of a thread, if it has an owner."""
        if not self._has_owners():
            return None
        with self.saver.lock:  # type: ignore[attr-defined]
            row = self._connection.execute(f"SELECT token_sha256, key_sha256 FROM {OWNERS_TABLE} "
                                           "WHERE thread_id = ?", (thread_id,)).fetchone()
        return (row[0], row[1]) if row else None

    def unsaved_owners(self, created_before: float) -> list[str]:
        """Owner rows older than `created_before` whose thread never saved a checkpoint."""
        if not self._has_owners():
            return []
        with self.saver.lock:  # type: ignore[attr-defined]
            rows = self._connection.execute(
                f"SELECT thread_id FROM {OWNERS_TABLE} AS o WHERE created_at < ? AND NOT EXISTS "
                "(SELECT 1 FROM checkpoints AS c WHERE c.thread_id = o.thread_id)", (created_before,)).fetchall()
        return [row[0] for row in rows]

    def counts(self) -> tuple[int, int]:
        """(threads, checkpoints) stored."""
        with self.saver.lock:  # type: ignore[attr-defined]
            row = self._connection.execute("SELECT count(DISTINCT thread_id), count(*) FROM checkpoints").fetchone()
        return int(row[0]), int(row[1])

    def compact(self) -> None:
        """Give the space of deleted threads back to the file system."""
        with self.saver.lock:  # type: ignore[attr-defined]
            self._connection.execute("VACUUM")
            self._connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def size_bytes(self) -> int | None:
        """The database file and its WAL."""
        return sum(p.stat().st_size for p in (self.path, self.path.with_name(self.path.name + "-wal")) if p.exists())

    def close(self) -> None:
        """Close the database and the lock file (closing twice is harmless)."""
        self._connection.close()
        self._locks.close()


def default_threads_path() -> Path:
    """Thread checkpoints live next to the catalog database (GPU_ADVISOR_HOME or the user data dir)."""
    from tools.catalog import default_db_path

    return default_db_path().parent / "threads.sqlite"


def check_threads_file(path: Path) -> None:
    """ValueError unless `path` is a threads database (or an empty SQLite file): never write into another file."""
    if not path.is_file():
        raise ValueError(f"no threads database at {path}")
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            connection.close()
    except sqlite3.DatabaseError:
        raise ValueError(f"{path} is not a threads database (not SQLite)") from None
    if tables and "checkpoints" not in tables:
        raise ValueError(f"{path} is not a threads database (no checkpoints table)")


def database_url_from(explicit: str | None = None) -> str | None:
    """The PostgreSQL URL to keep threads in: `explicit`, else $GPU_ADVISOR_DATABASE_URL, else None (SQLite)."""
    url = (explicit if explicit is not None else os.environ.get(DATABASE_URL_VAR, "")).strip()
    if url and not url.startswith(("postgresql://", "postgres://")):
        raise ValueError(f"{DATABASE_URL_VAR} must be a postgresql:// URL")
    return url or None


def open_thread_store(sqlite_path: Path, url: str | None = None, *, fallback: bool = False) -> ThreadStore:
    """PostgreSQL when a URL is given, else the SQLite file at `sqlite_path` (set aside and rebuilt when damaged;
    with `fallback`, in a private folder when its folder cannot be written)."""
    if url:
        from agent.threads_postgres import PostgresThreadStore

        return PostgresThreadStore(url)
    from agent.threads_open import open_sqlite_threads

    return open_sqlite_threads(sqlite_path, fallback=fallback)
