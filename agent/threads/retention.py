"""Retention: threads nobody wrote to for longer than GPU_ADVISOR_THREAD_RETENTION_DAYS are deleted, on demand
(`gpu-advisor threads prune`) or by a running advisor at most once an hour, in the background."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable

from langgraph.checkpoint.base.id import UUID

from agent.threads.base import ThreadStore

log = logging.getLogger("gpu_advisor.retention")

RETENTION_VAR = "GPU_ADVISOR_THREAD_RETENTION_DAYS"
"""Threads idle for longer are deleted (0 keeps them forever)."""
DEFAULT_RETENTION_DAYS = 90.0
PRUNE_EVERY_S = 3600.0
UUID_EPOCH_OFFSET_100NS = 0x01B21DD213814000
"""100 ns ticks between the UUID epoch (1582-10-15) and the Unix epoch."""


def checkpoint_time(checkpoint_id: str) -> float:
    """Unix time at which a checkpoint was made (its id is a time-ordered UUIDv6)."""
    return (UUID(checkpoint_id).time - UUID_EPOCH_OFFSET_100NS) / 1e7


def configured_retention_days(environ: dict[str, str] | None = None) -> float:
    """Days an idle thread is kept ($GPU_ADVISOR_THREAD_RETENTION_DAYS; 0 = forever)."""
    raw = ((os.environ if environ is None else environ).get(RETENTION_VAR) or "").strip()
    if not raw:
        return DEFAULT_RETENTION_DAYS
    try:
        days = float(raw)
    except ValueError:
        raise ValueError(f"{RETENTION_VAR} must be a number of days (0 keeps threads forever)") from None
    if not days >= 0 or days == float("inf"):
        raise ValueError(f"{RETENTION_VAR} must be a number of days (0 keeps threads forever)")
    return days


def prune_threads(store: ThreadStore, older_than_s: float, *, now: float | None = None) -> list[str]:
    """Delete the threads whose newest checkpoint is older than `older_than_s` seconds, and the owner rows older
    than that of threads that never saved one (their first turn failed); returns their ids."""
    cutoff = (time.time() if now is None else now) - older_than_s
    stale = [thread for thread, newest in store.last_activity() if newest and checkpoint_time(newest) < cutoff]
    deleted = []
    for thread in [*stale, *store.unsaved_owners(cutoff)]:
        with store.turn_lock(thread):  # a turn that came in meanwhile keeps the thread
            newest = store.saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
            if newest is None or checkpoint_time(newest.config["configurable"]["checkpoint_id"]) < cutoff:
                store.delete_thread(thread)
                deleted.append(thread)
    return deleted


class BackgroundPruner:
    """Runs `prune_threads` at most every PRUNE_EVERY_S, in a thread of its own, reporting start/end to `track`."""

    def __init__(self, store: ThreadStore, days: float, track: Callable[[int], None]) -> None:
        """Prune `store` of threads idle for `days` (0: never); `track(+1/-1)` counts the run as work in flight."""
        self.store, self.days, self._track = store, days, track
        self._guard = threading.Lock()
        self._next = time.monotonic()

    def maybe_run(self) -> None:
        """Start a pruning run when one is due."""
        with self._guard:
            if not self.days or time.monotonic() < self._next:
                return
            self._next = time.monotonic() + PRUNE_EVERY_S
        self._track(+1)
        threading.Thread(target=self._run, name="prune-threads", daemon=True).start()

    def _run(self) -> None:
        """Delete the threads past the retention period; failures are logged (housekeeping never breaks turns)."""
        try:
            removed = prune_threads(self.store, self.days * 86400)
        except Exception:
            log.exception("pruning old threads failed")
            return
        finally:
            self._track(-1)
        if removed:
            log.info("pruned %d thread(s) idle for more than %g days", len(removed), self.days)
