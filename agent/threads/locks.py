"""Per-thread turn locks that hold across processes: a byte-range lock on a file next to the SQLite threads database,
or a PostgreSQL advisory lock. Either way a process that dies releases its locks (the kernel or the server does)."""

from __future__ import annotations

import errno
import hashlib
import os
import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: locks stay within one process
    fcntl = None  # type: ignore[assignment]

FILE_LOCK_SLOTS = 1 << 31
"""Byte offsets a thread id hashes to in the lock file (collisions only serialise two threads' turns)."""


def thread_key(thread_id: str) -> int:
    """A stable signed 64-bit number for a thread id (the advisory lock key; its low bits pick the file byte)."""
    return int.from_bytes(hashlib.blake2b(thread_id.encode("utf-8"), digest_size=8).digest(), "big", signed=True)


class ProcessLocks:
    """One threading.Lock per key while someone holds or waits for it (no growth with the number of threads)."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[int, tuple[threading.Lock, int]] = {}

    @contextmanager
    def hold(self, key: int) -> Iterator[None]:
        """Hold the lock of `key` inside this process."""
        with self._guard:
            lock, users = self._locks.get(key, (threading.Lock(), 0))
            self._locks[key] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._guard:
                lock, users = self._locks[key]
                if users == 1:
                    del self._locks[key]
                else:
                    self._locks[key] = (lock, users - 1)


class FileTurnLocks:
    """Turn locks for the SQLite store: an in-process lock, then an exclusive POSIX lock on one byte of a lock file.

    POSIX record locks belong to the process, so the in-process lock (keyed by the same byte) comes first; the
    kernel drops the byte locks of a process that exits or is killed."""

    def __init__(self, path: Path) -> None:
        """Open (creating) the lock file at `path`; it stays open until `close` (closing it drops every lock)."""
        self.path = path
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        self._local = ProcessLocks()

    @contextmanager
    def hold(self, thread_id: str) -> Iterator[None]:
        """Run the body while no other thread or process runs a turn of `thread_id`."""
        offset = thread_key(thread_id) % FILE_LOCK_SLOTS
        if self._fd < 0:
            raise RuntimeError("the thread store is closed")
        with self._local.hold(offset):
            if fcntl is None:
                yield
                return
            self._lock_byte(offset)
            try:
                yield
            finally:
                fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, offset, os.SEEK_SET)

    def _lock_byte(self, offset: int) -> None:
        """Wait for the byte lock. Linux reports EDEADLK when two multi-threaded processes wait on each other's
        bytes (it takes the process as the owner); no turn holds two locks, so that is never real: wait and retry."""
        while True:
            try:
                fcntl.lockf(self._fd, fcntl.LOCK_EX, 1, offset, os.SEEK_SET)
                return
            except OSError as error:
                if error.errno != errno.EDEADLK:
                    raise
                time.sleep(random.uniform(0.002, 0.02))

    def close(self) -> None:
        """Close the lock file (once)."""
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)


class AdvisoryTurnLocks:
    """Turn locks for the PostgreSQL store: a session advisory lock on the thread's 64-bit key, held on a connection
    of its own pool (waiting turns never starve the checkpointer of connections) outside any transaction (so schema
    changes such as CREATE INDEX CONCURRENTLY never wait for a turn)."""

    def __init__(self, pool: Any) -> None:
        """Use connections from `pool` (a psycopg_pool.ConnectionPool in autocommit mode)."""
        self._pool = pool
        self._local = ProcessLocks()

    @contextmanager
    def hold(self, thread_id: str) -> Iterator[None]:
        """Run the body while no other thread, process or machine runs a turn of `thread_id`."""
        key = thread_key(thread_id)
        with self._local.hold(key), self._pool.connection() as connection, advisory_lock(connection, key):
            yield

    def close(self) -> None:
        """Nothing to close: the pool belongs to the store."""


@contextmanager
def advisory_lock(connection: Any, key: int) -> Iterator[None]:
    """Hold PostgreSQL's session advisory lock `key` on an autocommit connection; if it cannot be released cleanly
    the connection is closed (the server then releases it, and the pool drops the connection)."""
    connection.execute("SELECT pg_advisory_lock(%s)", (key,))
    try:
        yield
    finally:
        try:
            connection.execute("SELECT pg_advisory_unlock(%s)", (key,))
        except BaseException:
            connection.close()
            raise
