"""Prepare each version of the catalog file a server runs on as soon as it appears, before anyone asks (issue 27).

A deployment rolls a new catalog out as a new file (README, "Catalog: read-only"), under servers that keep running.
What a version needs read or built once (the candidates every ranking starts from, ~1 s at 1M offers; the /compare
store, ~13 s) would otherwise be paid by the first chat turn and the first job view after the change. One daemon
thread per worker looks at the file's identity (device, inode, size, mtime) every few seconds and calls `prepare`
once per new version, once it has stayed the same for one look (a file still being written in place is left alone).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

_STOP_WAIT_S = 30.0

_log = logging.getLogger("gpu_advisor.web")

Version = tuple[int, int, int, int]
"""A file version: device, inode, size and modification time (ns), as the derived stores name it."""


def version_of(path: Path) -> Version | None:
    """The file's version, None when there is no file."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns


class CatalogWatch:
    """Calls `prepare(path)` in its own thread for the version found at start and for every later one, once each;
    looks every `interval_s` seconds (the server's catalog_watch_s)."""

    def __init__(self, path: Path, prepare: Callable[[Path], object], *, interval_s: float):
        self.path, self.prepare, self.interval_s = path, prepare, interval_s
        self.prepared: Version | None = None
        """The last version whose preparation finished (None before the first)."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="catalog-watch", daemon=True)

    @property
    def alive(self) -> bool:
        """Whether the watching thread runs."""
        return self._thread.is_alive()

    def start(self) -> CatalogWatch:
        """Start watching (returns self)."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop watching; returns once the thread has ended (a preparation under way finishes first)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(_STOP_WAIT_S)

    def _run(self) -> None:
        """Look every interval; prepare a version that differs from the last prepared one and from none since the
        previous look."""
        prepared: Version | None = None
        last = version_of(self.path)
        while not self._stop.wait(self.interval_s):
            now = version_of(self.path)
            settled, last = now == last, now
            if now is None or now == prepared or not settled:
                continue
            prepared = now
            try:
                self.prepare(self.path)
                self.prepared = now
            except Exception as error:  # a file that is not a catalog: the first request says what is wrong
                reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
                _log.warning("catalog %s not prepared: %s", self.path, reason)
