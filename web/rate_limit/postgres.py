"""Token buckets in PostgreSQL: every server sharing the database counts a client's requests against one bucket.

Each request refills and takes a token in one transaction holding the bucket's row lock, on the database's clock
(servers' clocks may differ)."""

from __future__ import annotations

import logging
import random
from typing import Any

import psycopg
from psycopg_pool import PoolTimeout

from web.rate_limit.base import take_token

log = logging.getLogger("gpu_advisor.rate_limit")

TABLE = "gpu_advisor_rate_buckets"
PRUNE_PROBABILITY = 0.01
"""Share of requests that also delete buckets idle long enough to be full again (they carry no information)."""
POOL_SIZE = 4

SCHEMA = f"""CREATE TABLE IF NOT EXISTS {TABLE} (
    key text PRIMARY KEY, tokens double precision NOT NULL, updated double precision NOT NULL)"""
_NOW = "extract(epoch from clock_timestamp())::double precision"


class PostgresTokenBucketLimiter:
    """Per-key token buckets shared by every process on one PostgreSQL database (same API as TokenBucketLimiter)."""

    def __init__(self, url: str, *, per_minute: float, burst: int) -> None:
        """`per_minute` requests per minute on average, `burst` at once; per_minute 0 allows everything."""
        if per_minute < 0 or burst < 1:
            raise ValueError("per_minute must be >= 0 and burst >= 1")
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self._pool: Any = None
        if self.enabled:
            from agent.threads import missing_relations, open_pool, run_setup_once

            self._pool = open_pool(url, max_size=POOL_SIZE, name="gpu-advisor-rate-limit")
            try:
                run_setup_once(
                    self._pool, lambda connection: connection.execute(SCHEMA), needed=missing_relations(TABLE)
                )
            except Exception:
                self._pool.close()
                raise

    @property
    def enabled(self) -> bool:
        """False when the limit is turned off."""
        return self.rate > 0

    def acquire(self, key: str) -> float | None:
        """Take one token for `key`: None when allowed, else the seconds to wait before the next try. When the
        database cannot be reached the request is allowed (logged): the limit must not take the API down."""
        if not self.enabled:
            return None
        try:
            return self._take(key)
        except (psycopg.Error, PoolTimeout) as error:
            log.warning("rate limit not applied (database unavailable: %s)", type(error).__name__)
            return None

    def _take(self, key: str) -> float | None:
        """One token from the bucket, in one transaction."""
        with self._pool.connection() as connection, connection.transaction():
            connection.execute(
                f"INSERT INTO {TABLE} (key, tokens, updated) VALUES (%s, %s, {_NOW}) ON CONFLICT (key) DO NOTHING",
                (key, self.burst),
            )
            row = connection.execute(
                f"SELECT tokens, updated, {_NOW} AS now FROM {TABLE} WHERE key = %s FOR UPDATE", (key,)
            ).fetchone()
            tokens, wait = take_token(row["tokens"], row["now"] - row["updated"], rate=self.rate, burst=self.burst)
            connection.execute(
                f"UPDATE {TABLE} SET tokens = %s, updated = %s WHERE key = %s", (tokens, row["now"], key)
            )
            if random.random() < PRUNE_PROBABILITY:
                connection.execute(f"DELETE FROM {TABLE} WHERE updated < {_NOW} - %s", (self.burst / self.rate,))
        return wait

    def close(self) -> None:
        """Close the connection pool."""
        if self._pool is not None:
            self._pool.close()
