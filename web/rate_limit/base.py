"""The token bucket every limiter shares: `rate` tokens per second, at most `burst` saved up, and the in-process
limiter (the SQLite and PostgreSQL limiters keep the same buckets in a database)."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

MAX_CLIENTS = 10_000
"""Buckets kept before full (idle) ones are forgotten; bounds memory under many client addresses."""
TOKEN_EPSILON = 1e-9
"""Rounding slack when a client comes back after exactly the wait it was given."""
RATE_LIMIT_FILE = "rate_limit.sqlite"
"""Buckets shared by the worker processes of one machine, next to the threads database."""


@dataclass(kw_only=True)
class _Bucket:
    """Tokens left for one client and when they were last counted."""

    tokens: float
    """Requests the client may still make right now."""
    updated: float
    """Clock reading of the last refill."""


class TokenBucketLimiter:
    """Per-key token buckets; thread-safe; one process only (each uvicorn worker has its own)."""

    def __init__(self, *, per_minute: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        """`per_minute` requests per minute on average, `burst` at once; per_minute 0 allows everything."""
        if per_minute < 0 or burst < 1:
            raise ValueError("per_minute must be >= 0 and burst >= 1")
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        """False when the limit is turned off."""
        return self.rate > 0

    def acquire(self, key: str) -> float | None:
        """Take one token for `key`: None when allowed, else the seconds to wait before the next try."""
        if not self.enabled:
            return None
        now = self._clock()
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                self._forget_idle(now)
                bucket = self._buckets[key] = _Bucket(tokens=self.burst, updated=now)
            bucket.tokens, wait = take_token(bucket.tokens, now - bucket.updated, rate=self.rate, burst=self.burst)
            bucket.updated = now
            return wait

    def _forget_idle(self, now: float) -> None:
        """Drop buckets that have refilled completely once too many clients are tracked."""
        if len(self._buckets) < MAX_CLIENTS:
            return
        full_after = self.burst / self.rate
        for key in [k for k, b in self._buckets.items() if now - b.updated >= full_after]:
            del self._buckets[key]
        if len(self._buckets) >= MAX_CLIENTS:  # all busy: forget the oldest half rather than grow without bound
            for key in sorted(self._buckets, key=lambda k: self._buckets[k].updated)[: MAX_CLIENTS // 2]:
                del self._buckets[key]


def take_token(tokens: float, elapsed_s: float, *, rate: float, burst: float) -> tuple[float, float | None]:
    """Refill a bucket for `elapsed_s` and take one token: (tokens left, None) when allowed, else (tokens, seconds
    to wait)."""
    refilled = min(burst, tokens + max(elapsed_s, 0.0) * rate)
    if refilled >= 1.0 - TOKEN_EPSILON:  # waiting exactly the time returned must be enough
        return max(refilled - 1.0, 0.0), None
    return refilled, (1.0 - refilled) / rate


def retry_after_header(wait_s: float) -> str:
    """Whole seconds for the Retry-After header (at least 1)."""
    return str(max(1, math.ceil(wait_s)))
