"""What the Slack stores share: how long claims and seen signatures are kept, the thread map's record and key, and
where the SQLite file lives."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tools.catalog import default_db_path

DB_FILENAME = "slack.sqlite"
CLAIM_TTL_S = 7 * 24 * 3600.0
"""Claims older than this are pruned; Slack stops retrying an event after about an hour."""
REPLAY_WINDOW_S = 300.0
"""Slack signatures older than five minutes are refused anyway (Bolt checks the timestamp)."""
SEEN_TTL_S = 2 * REPLAY_WINDOW_S
PRUNE_EVERY_S = 60.0


def default_store_path() -> Path:
    """`$GPU_ADVISOR_HOME/slack.sqlite`, else next to the offers catalog in the user data dir."""
    home = os.environ.get("GPU_ADVISOR_HOME")
    return (Path(home).expanduser() if home else default_db_path().parent) / DB_FILENAME


@dataclass(frozen=True, kw_only=True)
class ThreadLink:
    """A Slack conversation thread and the agent thread that continues it."""

    key: str
    """'<workspace>:<channel>:<thread_ts>'."""
    agent_thread_id: str
    """The advisor's thread id for this conversation."""
    language: str | None
    """Language of the last answer in the thread."""


def thread_key(workspace: str, channel: str, thread_ts: str) -> str:
    """The key of a Slack thread: workspace (team or enterprise id), channel id and the ts of its first message.
    Channel ids and message ts are unique only within a workspace, so two workspaces never share a key."""
    return f"{workspace}:{channel}:{thread_ts}"
