"""Where conversation threads live: a LangGraph checkpointer that keeps one small checkpoint per turn and a per-thread
turn lock that holds across processes; SQLite (embedded default, `sqlite`) or PostgreSQL (shared by any number of
servers, `postgres`, imported only when a database URL is set); pruning by age in `retention`. This module opens
the store a server needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agent.threads.base import (
    ThreadStore,
    check_threads_file,
    database_url_from,
    default_threads_path,
)
from agent.threads.retention import (
    BackgroundPruner,
    configured_retention_days,
    prune_threads,
)
from tools.faces import lazy_face

if TYPE_CHECKING:
    from agent.threads.postgres import (
        check_connection,
        missing_relations,
        open_pool,
        run_setup_once,
    )

__getattr__, _ = lazy_face(
    __name__, dict.fromkeys(["check_connection", "missing_relations", "open_pool", "run_setup_once"], "postgres")
)  # psycopg is loaded only when PostgreSQL is used
__all__ = [
    "BackgroundPruner",
    "ThreadStore",
    "check_connection",
    "check_threads_file",
    "configured_retention_days",
    "database_url_from",
    "default_threads_path",
    "missing_relations",
    "open_pool",
    "open_thread_store",
    "prune_threads",
    "run_setup_once",
]


def open_thread_store(sqlite_path: Path, url: str | None = None, *, fallback: bool = False) -> ThreadStore:
    """PostgreSQL when a URL is given, else the SQLite file at `sqlite_path` (set aside and rebuilt when damaged;
    with `fallback`, in a private folder when its folder cannot be written)."""
    if url:
        from agent.threads.postgres import PostgresThreadStore

        return PostgresThreadStore(url)
    from agent.threads.sqlite_open import open_sqlite_threads

    return open_sqlite_threads(sqlite_path, fallback=fallback)
