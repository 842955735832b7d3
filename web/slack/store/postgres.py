"""The Slack store in PostgreSQL (same API as web.slack.store.sqlite.SlackStore), shared by every server."""

from __future__ import annotations

import time

from agent.threads import missing_relations, open_pool, run_setup_once
from web.slack.store.base import CLAIM_TTL_S, PRUNE_EVERY_S, SEEN_TTL_S, ThreadLink, thread_key

POOL_SIZE = 4
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS gpu_advisor_slack_threads (key text PRIMARY KEY, agent_thread_id text NOT NULL, "
    "language text, updated_at double precision)",
    "CREATE TABLE IF NOT EXISTS gpu_advisor_slack_claims (key text PRIMARY KEY, claimed_at double precision)",
    "CREATE INDEX IF NOT EXISTS gpu_advisor_slack_claims_at ON gpu_advisor_slack_claims (claimed_at)",
    "CREATE TABLE IF NOT EXISTS gpu_advisor_slack_seen (signature text PRIMARY KEY, seen_at double precision NOT NULL)",
    "CREATE INDEX IF NOT EXISTS gpu_advisor_slack_seen_at ON gpu_advisor_slack_seen (seen_at)",
)
RELATIONS = (
    "gpu_advisor_slack_threads",
    "gpu_advisor_slack_claims",
    "gpu_advisor_slack_claims_at",
    "gpu_advisor_slack_seen",
    "gpu_advisor_slack_seen_at",
)
"""What SCHEMA creates (a start that finds them all takes no lock)."""


class PostgresSlackStore:
    """Thread map, answered-event claims and seen request signatures in PostgreSQL tables."""

    def __init__(self, url: str) -> None:
        """Connect and create the tables when missing."""
        self._pool = open_pool(url, max_size=POOL_SIZE, name="gpu-advisor-slack")
        try:
            run_setup_once(self._pool, self._create_tables, needed=missing_relations(*RELATIONS))
        except Exception:
            self._pool.close()
            raise
        self._next_prune = 0.0
        self.prune()

    @staticmethod
    def _create_tables(connection: object) -> None:
        """The store's tables, on the set-up transaction's connection."""
        for statement in SCHEMA:
            connection.execute(statement)  # type: ignore[attr-defined]

    def _execute(self, sql: str, params: tuple[object, ...] = ()) -> list[dict[str, object]]:
        """Run one statement (autocommit); rows when it returns any."""
        with self._pool.connection() as connection:
            cursor = connection.execute(sql, params)
            return cursor.fetchall() if cursor.description else []

    def prune(self, older_than_s: float = CLAIM_TTL_S) -> int:
        """Forget old claims and signatures past the replay window; returns how many claims were removed."""
        now = time.time()
        self._execute("DELETE FROM gpu_advisor_slack_seen WHERE seen_at < %s", (now - SEEN_TTL_S,))
        return len(
            self._execute(
                "DELETE FROM gpu_advisor_slack_claims WHERE claimed_at < %s RETURNING key", (now - older_than_s,)
            )
        )

    def link(self, workspace: str, channel: str, thread_ts: str) -> ThreadLink | None:
        """The agent thread a Slack thread of `workspace` continues, if any."""
        key = thread_key(workspace, channel, thread_ts)
        rows = self._execute("SELECT agent_thread_id, language FROM gpu_advisor_slack_threads WHERE key = %s", (key,))
        if not rows:
            return None
        return ThreadLink(key=key, agent_thread_id=str(rows[0]["agent_thread_id"]), language=rows[0]["language"])  # type: ignore[arg-type]

    def save_link(
        self, workspace: str, channel: str, thread_ts: str, agent_thread_id: str, language: str | None
    ) -> ThreadLink:
        """Remember (or update) the agent thread and language of a Slack thread of `workspace`."""
        key = thread_key(workspace, channel, thread_ts)
        self._execute(
            "INSERT INTO gpu_advisor_slack_threads (key, agent_thread_id, language, updated_at) "
            "VALUES (%s, %s, %s, %s) ON CONFLICT (key) DO UPDATE SET agent_thread_id = "
            "excluded.agent_thread_id, language = excluded.language, updated_at = excluded.updated_at",
            (key, agent_thread_id, language, time.time()),
        )
        return ThreadLink(key=key, agent_thread_id=agent_thread_id, language=language)

    def claim(self, key: str) -> bool:
        """True the first time `key` is claimed by any server, False for every later attempt."""
        return bool(
            self._execute(
                "INSERT INTO gpu_advisor_slack_claims (key, claimed_at) VALUES (%s, %s) "
                "ON CONFLICT DO NOTHING RETURNING key",
                (key, time.time()),
            )
        )

    def claimed(self, key: str) -> bool:
        """Whether `key` was claimed already."""
        return bool(self._execute("SELECT 1 FROM gpu_advisor_slack_claims WHERE key = %s", (key,)))

    def first_delivery(self, signature: str) -> bool:
        """True the first time any server sees a request signature within the replay window."""
        now = time.time()
        if now >= self._next_prune:
            self._next_prune = now + PRUNE_EVERY_S
            self._execute("DELETE FROM gpu_advisor_slack_seen WHERE seen_at < %s", (now - SEEN_TTL_S,))
        return bool(
            self._execute(
                "INSERT INTO gpu_advisor_slack_seen (signature, seen_at) VALUES (%s, %s) "
                "ON CONFLICT DO NOTHING RETURNING signature",
                (signature, now),
            )
        )

    def close(self) -> None:
        """Close the connection pool."""
        self._pool.close()
