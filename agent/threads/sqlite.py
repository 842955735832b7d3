"""Threads in SQLite (the embedded default): LangGraph's SqliteSaver keeping one small checkpoint per turn, with a
per-thread turn lock that holds across processes."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from agent.threads.base import (
    OWNERS_SCHEMA,
    OWNERS_TABLE,
    PROBE_BYTES,
    PROBE_TABLE,
    SQLITE_BUSY_TIMEOUT_S,
    CarryOverOnly,
)
from agent.threads.locks import FileTurnLocks


class TrimmedSqliteSaver(CarryOverOnly, SqliteSaver):
    """SqliteSaver keeping one small checkpoint per turn."""


class SqliteThreadStore:
    """Threads in one SQLite file (WAL), turn locks in a byte-range lock file next to it."""

    def __init__(self, path: Path) -> None:
        """Open (creating) the threads database at `path` (agent/threads/sqlite_open.py repairs or relocates it)."""
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
                self._connection.execute(
                    f"INSERT INTO {PROBE_TABLE} VALUES (?, zeroblob(?))", (time.time(), PROBE_BYTES)
                )
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
                "SELECT thread_id, max(checkpoint_id) FROM checkpoints GROUP BY thread_id"
            ).fetchall()
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
            return (
                self._connection.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (OWNERS_TABLE,)
                ).fetchone()
                is not None
            )

    def set_owner(self, thread_id: str, token_sha256: str, key_sha256: str | None) -> None:
        """Record the owner of a new thread."""
        with self.saver.lock, self._connection:  # type: ignore[attr-defined]
            self._connection.execute(OWNERS_SCHEMA)
            self._connection.execute(
                f"INSERT INTO {OWNERS_TABLE} VALUES (?, ?, ?, ?)", (thread_id, token_sha256, key_sha256, time.time())
            )

    def owner(self, thread_id: str) -> tuple[str, str | None] | None:
        """The owner digests of a thread, if it has an owner."""
        if not self._has_owners():
            return None
        with self.saver.lock:  # type: ignore[attr-defined]
            row = self._connection.execute(
                f"SELECT token_sha256, key_sha256 FROM {OWNERS_TABLE} WHERE thread_id = ?", (thread_id,)
            ).fetchone()
        return (row[0], row[1]) if row else None

    def unsaved_owners(self, created_before: float) -> list[str]:
        """Owner rows older than `created_before` whose thread never saved a checkpoint."""
        if not self._has_owners():
            return []
        with self.saver.lock:  # type: ignore[attr-defined]
            rows = self._connection.execute(
                f"SELECT thread_id FROM {OWNERS_TABLE} AS o WHERE created_at < ? AND NOT EXISTS "
                "(SELECT 1 FROM checkpoints AS c WHERE c.thread_id = o.thread_id)",
                (created_before,),
            ).fetchall()
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
