"""Token buckets in a SQLite file: the worker processes of one `serve --workers N` count a client's requests against
one bucket (without it each worker would allow the full rate)."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from pathlib import Path

from web.rate_limit.base import take_token

log = logging.getLogger("gpu_advisor.rate_limit")

PRUNE_EVERY_S = 60.0
SCHEMA = "CREATE TABLE IF NOT EXISTS buckets (key TEXT PRIMARY KEY, tokens REAL NOT NULL, updated REAL NOT NULL)"


class SqliteTokenBucketLimiter:
    """Per-key token buckets shared by the processes of one machine (same API as TokenBucketLimiter)."""

    def __init__(self, path: Path, *, per_minute: float, burst: int) -> None:
        """`per_minute` requests per minute on average, `burst` at once; per_minute 0 allows everything."""
        if per_minute < 0 or burst < 1:
            raise ValueError("per_minute must be >= 0 and burst >= 1")
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self._lock = threading.Lock()
        self._next_prune = 0.0
        self._connection: sqlite3.Connection | None = None
        if self.enabled:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._connection = sqlite3.connect(str(path), isolation_level=None, timeout=10, check_same_thread=False)
            self._connection.execute("PRAGMA journal_mode=WAL")
            self._connection.execute("PRAGMA synchronous=NORMAL")  # buckets need no fsync per request
            self._connection.execute(SCHEMA)

    @property
    def enabled(self) -> bool:
        """False when the limit is turned off."""
        return self.rate > 0

    def acquire(self, key: str) -> float | None:
        """Take one token for `key`: None when allowed, else the seconds to wait before the next try. When the file
        cannot be used the request is allowed (logged): the limit must not take the API down."""
        if self._connection is None:
            return None
        try:
            return self._take(key)
        except sqlite3.Error as error:
            log.warning("rate limit not applied (%s)", error)
            return None

    def _take(self, key: str) -> float | None:
        """One token from the bucket, in one write transaction."""
        with self._lock:
            db = self._connection
            db.execute("BEGIN IMMEDIATE")  # one writer at a time across the processes
            try:
                now = time.time()
                row = db.execute("SELECT tokens, updated FROM buckets WHERE key = ?", (key,)).fetchone()
                saved, elapsed = (row[0], now - row[1]) if row else (self.burst, 0.0)
                tokens, wait = take_token(saved, elapsed, rate=self.rate, burst=self.burst)
                db.execute(
                    "INSERT INTO buckets (key, tokens, updated) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE "
                    "SET tokens = excluded.tokens, updated = excluded.updated",
                    (key, tokens, now),
                )
                if now >= self._next_prune:
                    self._next_prune = now + PRUNE_EVERY_S
                    db.execute("DELETE FROM buckets WHERE updated < ?", (now - self.burst / self.rate,))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return wait

    def close(self) -> None:
        """Close the database."""
        if self._connection is not None:
            self._connection.close()
