"""What every thread store shares: the settings and tables they use, the one-small-checkpoint-per-turn saver mix-in,
the store protocol the advisor needs, and where the SQLite file lives."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from langgraph.checkpoint.base import BaseCheckpointSaver

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
OWNERS_SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS {OWNERS_TABLE} (thread_id text PRIMARY KEY, token_sha256 text NOT NULL, "
    "key_sha256 text, created_at double precision NOT NULL)"
)


@cache
def carried_keys() -> frozenset[str]:
    """The state keys the next turn needs: every key the graph does not reset per turn and the input does not set."""
    from agent.graph import PER_TURN_RESET, AgentState

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
