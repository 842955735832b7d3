"""Persistent Slack state: which agent thread a Slack thread continues, which events and messages were already
answered (Slack's retries never produce a second answer), and which signed requests were already seen (a replayed
request is refused). SQLite by default (`sqlite`); PostgreSQL when GPU_ADVISOR_DATABASE_URL is set (`postgres`), so
every server behind a load balancer shares it. This module picks the store.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.threads import database_url_from
from web.slack.store.base import ThreadLink, default_store_path, thread_key
from web.slack.store.sqlite import SlackStore

__all__ = ["SlackStore", "ThreadLink", "default_store_path", "open_store", "thread_key"]


def open_store(path: str | Path | None = None, *, database_url: str | None = None) -> Any:
    """The PostgreSQL store when a database URL is set (argument or GPU_ADVISOR_DATABASE_URL), else SQLite."""
    url = database_url_from(database_url)
    if url:
        from web.slack.store.postgres import PostgresSlackStore

        return PostgresSlackStore(url)
    return SlackStore(path)
