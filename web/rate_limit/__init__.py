"""A token bucket per client: `rate` tokens per second, at most `burst` saved up; in process (`base`), shared by the
workers of one machine through SQLite (`sqlite`), or by every server through PostgreSQL (`postgres`). This module
picks the limiter a server needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from web.rate_limit.base import RATE_LIMIT_FILE, TokenBucketLimiter, retry_after_header

__all__ = ["TokenBucketLimiter", "limiter_for", "make_limiter", "retry_after_header"]


def make_limiter(
    *, per_minute: float, burst: int, database_url: str | None = None, shared_path: Path | None = None
) -> Any:
    """One bucket per client shared by every server through PostgreSQL when `database_url` is set, by the worker
    processes of one machine through the SQLite file `shared_path` when given, else kept in this process."""
    if database_url:
        from web.rate_limit.postgres import PostgresTokenBucketLimiter

        return PostgresTokenBucketLimiter(database_url, per_minute=per_minute, burst=burst)
    if shared_path is not None:
        from web.rate_limit.sqlite import SqliteTokenBucketLimiter

        return SqliteTokenBucketLimiter(shared_path, per_minute=per_minute, burst=burst)
    return TokenBucketLimiter(per_minute=per_minute, burst=burst)


def limiter_for(settings: Any) -> Any:
    """The limiter a server with these ServerSettings needs: PostgreSQL, a file next to the threads when several
    workers share one machine, else in process."""
    shared = None
    if settings.workers > 1 and not settings.database_url:
        from agent.threads import default_threads_path

        shared = (settings.checkpoint_path or default_threads_path()).parent / RATE_LIMIT_FILE
    return make_limiter(
        per_minute=settings.rate_per_minute,
        burst=settings.rate_burst,
        database_url=settings.database_url,
        shared_path=shared,
    )
