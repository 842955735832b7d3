"""Opening the SQLite threads database whatever state it is in: a damaged file is set aside as
`threads.sqlite.damaged-<UTC time>` and rebuilt, with a logged notice (its conversations are lost, never the service);
when the default folder cannot be written, the threads live in a private folder under the temp dir for this run."""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agent.threads.sqlite import SqliteThreadStore

log = logging.getLogger("gpu_advisor.threads")

DAMAGE_CODES = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})
"""SQLite's answers for a file that is damaged or not a database at all (not a lock, a permission or a full disk)."""
COMPANIONS = ("-wal", "-shm")


class DamagedThreads(Exception):
    """The threads file fails SQLite's quick check."""


def is_damage(error: BaseException) -> bool:
    """Whether an error says the file itself is damaged."""
    return isinstance(error, DamagedThreads) or getattr(error, "sqlite_errorname", "") in DAMAGE_CODES


def _opened(path: Path) -> SqliteThreadStore:
    """The store at `path`, checked with SQLite's quick check (DamagedThreads when it fails)."""
    store = SqliteThreadStore(path)
    try:
        problem = store.damage()
    except BaseException:
        store.close()
        raise
    if problem is not None:
        store.close()
        raise DamagedThreads(problem)
    return store


def _inode(path: Path) -> tuple[int, int] | None:
    """The file's identity, None when it is missing."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


@contextmanager
def _repair_lock(path: Path) -> Iterator[None]:
    """An exclusive lock beside the threads file while it is set aside (processes starting together repair once)."""
    import fcntl

    with open(path.with_name(f".{path.name}.repair.lock"), "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def set_aside(path: Path, seen: tuple[int, int] | None, reason: str) -> None:
    """Rename the damaged file (and its WAL) to `<name>.damaged-<UTC time>` unless another process already did."""
    from tools.catalog import keep_aside

    with _repair_lock(path):
        if seen is None or _inode(path) != seen:
            return  # repaired meanwhile by another process: use its new file
        kept = keep_aside(path, "damaged")
        for suffix in COMPANIONS:
            companion = path.with_name(path.name + suffix)
            if companion.exists():
                os.replace(companion, kept.with_name(kept.name + suffix))
    log.warning(
        "threads database %s was damaged (%s): set aside as %s and rebuilt empty; earlier conversations "
        "are not continued",
        path,
        reason,
        kept.name,
    )


def _cannot_write(path: Path) -> bool:
    """Whether the threads file or its folder is read-only for this process."""
    folder = path.parent
    if not folder.exists():
        return not os.access(next((p for p in folder.parents if p.exists()), Path("/")), os.W_OK)
    return not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK))


def _relocated(path: Path, error: BaseException) -> SqliteThreadStore | None:
    """The threads in the private temp folder (with a notice), None when there is none to use."""
    from tools.catalog import private_data_folder

    folder = private_data_folder()
    if folder is None or folder == path.parent:
        return None
    reason = getattr(error, "strerror", None) or " ".join(str(error).split())
    target = folder / path.name
    log.warning(
        "cannot write the conversation threads at %s (%s); keeping them in %s for now (set "
        "GPU_ADVISOR_HOME to a writable folder)",
        path,
        reason,
        target,
    )
    return open_sqlite_threads(target, fallback=False)


def open_sqlite_threads(path: Path, *, fallback: bool) -> SqliteThreadStore:
    """The threads store at `path`: damaged files set aside and rebuilt; with `fallback`, a read-only folder means
    the private temp folder instead."""
    seen = _inode(path)
    try:
        return _opened(path)
    except (sqlite3.Error, DamagedThreads, OSError) as error:
        if not is_damage(error):
            if fallback and _cannot_write(path):
                relocated = _relocated(path, error)
                if relocated is not None:
                    return relocated
            raise
        if _cannot_write(path):
            raise  # cannot be set aside here: the caller reports it
        set_aside(path, seen, " ".join(str(error).split()))
    return _opened(path)
