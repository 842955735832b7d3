"""Checks `serve` runs before starting uvicorn, so that unusable storage is one clear line (exit 2) instead of a
traceback from every worker's startup."""

from __future__ import annotations

import sqlite3

from contract.errors import UserError
from web.settings import ServerSettings


def check_thread_storage(settings: ServerSettings) -> None:
    """UserError unless the conversation threads can be opened (the SQLite file, created when missing); with a
    PostgreSQL URL the server checks its database itself."""
    if settings.database_url:
        return
    from agent.threads import default_threads_path, open_thread_store

    path = settings.checkpoint_path or default_threads_path()
    try:
        open_thread_store(path).close()
    except (sqlite3.Error, OSError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise UserError(
            f"cannot open the conversation threads at {path} ({reason}); set GPU_ADVISOR_HOME to a "
            f"writable folder, or GPU_ADVISOR_CHECKPOINT_PATH / GPU_ADVISOR_DATABASE_URL"
        ) from error
