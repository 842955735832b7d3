"""Persistent Slack state in SQLite (via sqlite-utils): which agent thread a Slack thread continues, and which
events and messages were already answered, so Slack's retries never produce a second answer."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from sqlite_utils import Database

from tools.catalog import default_db_path

DB_FILENAME = "slack.sqlite"
CLAIM_TTL_S = 7 * 24 * 3600.0
"""Claims older than this are pruned; Slack stops retrying an event after about an hour."""


def default_store_path() -> Path:
    """`$GPU_ADVISOR_HOME/slack.sqlite`, else next to the offers catalog in the user data dir."""
    home = os.environ.get("GPU_ADVISOR_HOME")
    return (Path(home).expanduser() if home else default_db_path().parent) / DB_FILENAME


@dataclass(frozen=True, kw_only=True)
class ThreadLink:
    """A Slack conversation thread and the agent thread that continues it."""

    key: str
    """'<channel>:<thread_ts>'."""
    agent_thread_id: str
    """The advisor's thread id for this conversation."""
    language: str | None
    """Language of the last answer in the thread."""


def thread_key(channel: str, thread_ts: str) -> str:
    """The key of a Slack thread: channel id and the ts of its first message."""
    return f"{channel}:{thread_ts}"


class SlackStore:
    """Thread map and answered-event claims in one SQLite file; safe to share between listener threads."""

    def __init__(self, path: str | Path | None = None) -> None:
        """Open (creating if needed) the store at `path` (default: `default_store_path()`)."""
        self.path = Path(path) if path is not None else default_store_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        connection = sqlite3.connect(str(self.path), check_same_thread=False, timeout=10)
        self._db = Database(connection)
        self._db.execute("PRAGMA journal_mode=WAL")
        if "threads" not in self._db.table_names():
            self._db["threads"].create({"key": str, "agent_thread_id": str, "language": str, "updated_at": float},
                                       pk="key", not_null={"agent_thread_id"})
        if "claims" not in self._db.table_names():
            self._db["claims"].create({"key": str, "claimed_at": float}, pk="key")
            self._db["claims"].create_index(["claimed_at"])
        self.prune()

    def prune(self, older_than_s: float = CLAIM_TTL_S) -> int:
        """Forget claims older than `older_than_s` seconds; returns how many were removed."""
        with self._lock, self._db.conn:
            cursor = self._db.conn.execute("DELETE FROM claims WHERE claimed_at < ?", (time.time() - older_than_s,))
            return cursor.rowcount

    def link(self, channel: str, thread_ts: str) -> ThreadLink | None:
        """The agent thread a Slack thread continues, if any."""
        key = thread_key(channel, thread_ts)
        with self._lock:
            rows = list(self._db["threads"].rows_where("key = ?", [key]))
        if not rows:
            return None
        row = rows[0]
        return ThreadLink(key=key, agent_thread_id=row["agent_thread_id"], language=row["language"])

    def save_link(self, channel: str, thread_ts: str, agent_thread_id: str, language: str | None) -> ThreadLink:
        """Remember (or update) the agent thread and language of a Slack thread."""
        key = thread_key(channel, thread_ts)
        with self._lock:
            self._db["threads"].upsert({"key": key, "agent_thread_id": agent_thread_id, "language": language,
                                        "updated_at": time.time()}, pk="key")
        return ThreadLink(key=key, agent_thread_id=agent_thread_id, language=language)

    def claim(self, key: str) -> bool:
        """True the first time `key` is claimed (an event id, a message ts), False for every later attempt."""
        now = time.time()
        with self._lock, self._db.conn:
            cursor = self._db.conn.execute("INSERT OR IGNORE INTO claims (key, claimed_at) VALUES (?, ?)", (key, now))
            return cursor.rowcount == 1

    def claimed(self, key: str) -> bool:
        """Whether `key` was claimed already."""
        with self._lock:
            return bool(list(self._db["claims"].rows_where("key = ?", [key])))

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.conn.close()
