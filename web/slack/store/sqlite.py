"""The Slack store in SQLite (the default): thread map, answered-event claims and seen request signatures in one
file, shared by listener threads and processes."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from web.slack.store.base import CLAIM_TTL_S, PRUNE_EVERY_S, SEEN_TTL_S, ThreadLink, default_store_path, thread_key

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS threads (key TEXT PRIMARY KEY, agent_thread_id TEXT NOT NULL, language TEXT, "
    "updated_at REAL)",
    "CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY, claimed_at REAL)",
    "CREATE INDEX IF NOT EXISTS idx_claims_claimed_at ON claims (claimed_at)",
    "CREATE TABLE IF NOT EXISTS seen_requests (signature TEXT PRIMARY KEY, seen_at REAL NOT NULL)",
    "CREATE INDEX IF NOT EXISTS idx_seen_requests_seen_at ON seen_requests (seen_at)",
)


class SlackStore:
    """Thread map, answered-event claims and seen request signatures in one SQLite file (WAL); safe to share
    between listener threads and between processes."""

    def __init__(self, path: str | Path | None = None) -> None:
        """Open (creating if needed) the store at `path` (default: `default_store_path()`)."""
        self.path = Path(path) if path is not None else default_store_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._connection = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30, isolation_level=None)
        self._connection.execute("PRAGMA journal_mode=WAL")
        for statement in SCHEMA:
            self._connection.execute(statement)
        self._next_prune = 0.0
        self.prune()

    def _execute(self, sql: str, params: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        """Run one statement (autocommit) under the store's lock."""
        with self._lock:
            return self._connection.execute(sql, params)

    def prune(self, older_than_s: float = CLAIM_TTL_S) -> int:
        """Forget claims older than `older_than_s` seconds and signatures past the replay window; returns how many
        claims were removed."""
        now = time.time()
        self._execute("DELETE FROM seen_requests WHERE seen_at < ?", (now - SEEN_TTL_S,))
        return self._execute("DELETE FROM claims WHERE claimed_at < ?", (now - older_than_s,)).rowcount

    def link(self, workspace: str, channel: str, thread_ts: str) -> ThreadLink | None:
        """The agent thread a Slack thread of `workspace` continues, if any."""
        key = thread_key(workspace, channel, thread_ts)
        row = self._execute("SELECT agent_thread_id, language FROM threads WHERE key = ?", (key,)).fetchone()
        return ThreadLink(key=key, agent_thread_id=row[0], language=row[1]) if row else None

    def save_link(
        self, workspace: str, channel: str, thread_ts: str, agent_thread_id: str, language: str | None
    ) -> ThreadLink:
        """Remember (or update) the agent thread and language of a Slack thread of `workspace`."""
        key = thread_key(workspace, channel, thread_ts)
        self._execute(
            "INSERT INTO threads (key, agent_thread_id, language, updated_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (key) DO UPDATE SET agent_thread_id = excluded.agent_thread_id, "
            "language = excluded.language, updated_at = excluded.updated_at",
            (key, agent_thread_id, language, time.time()),
        )
        return ThreadLink(key=key, agent_thread_id=agent_thread_id, language=language)

    def claim(self, key: str) -> bool:
        """True the first time `key` is claimed (an event id, a message ts), False for every later attempt."""
        cursor = self._execute("INSERT OR IGNORE INTO claims (key, claimed_at) VALUES (?, ?)", (key, time.time()))
        return cursor.rowcount == 1

    def claimed(self, key: str) -> bool:
        """Whether `key` was claimed already."""
        return self._execute("SELECT 1 FROM claims WHERE key = ?", (key,)).fetchone() is not None

    def first_delivery(self, signature: str) -> bool:
        """True the first time a request signature is seen within the replay window, False for a replay."""
        now = time.time()
        if now >= self._next_prune:
            self._next_prune = now + PRUNE_EVERY_S
            self._execute("DELETE FROM seen_requests WHERE seen_at < ?", (now - SEEN_TTL_S,))
        cursor = self._execute(
            "INSERT OR IGNORE INTO seen_requests (signature, seen_at) VALUES (?, ?)", (signature, now)
        )
        return cursor.rowcount == 1

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._connection.close()
