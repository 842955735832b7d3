"""Where the catalog lives and keeping it usable: the shipped snapshot, building on first use, and what happens to a
damaged, outdated or foreign file at the catalog path.

* ``default_db_path()`` — ``$GPU_ADVISOR_DB``, else ``$GPU_ADVISOR_HOME/catalog.sqlite``, else the user data dir.
* ``ensure_catalog(path)`` — a usable catalog plus a notice for the user when something was done:
  missing -> built from the shipped snapshot; ours but damaged or of an older schema -> the bad file is kept aside
  (``catalog.sqlite.damaged-<UTC time>``) and a fresh one built; a snapshot-built catalog older than the shipped
  snapshot -> rebuilt; a file that is not a gpu-advisor catalog -> NotACatalogError, the file untouched. An explicit
  path never gets its folder created. A folder that cannot be written -> CatalogUnavailableError (one line).
  The deep check (``PRAGMA quick_check``) runs once per catalog file version: versions that passed it are recorded
  (inode, size, mtime, shipped snapshot) in the private temp folder, and later starts only read header, meta and
  schema.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.catalog.db import (
    CatalogCheck,
    CatalogError,
    CatalogUnavailableError,
    NotACatalogError,
    inspect_catalog,
)
from tools.catalog.paths import DB_FILENAME

if TYPE_CHECKING:
    pass

from tools.catalog.paths import resolve_db_path
from tools.catalog.snapshot import (
    _shipped_date,
    build_from_snapshot,
    file_signature,
    snapshot_fingerprint,
)

log = logging.getLogger("gpu_advisor.catalog")


# ------------------------------------------------------------------------------------------------------------ paths


@dataclass(frozen=True)
class CatalogStatus:
    """A usable catalog, and what was done to get it (a notice for the user, None when nothing was)."""

    path: Path
    notice: str | None = None
    kept_aside: Path | None = None


_verified: dict[str, tuple[int, int, int]] = {}
"""Catalog paths checked healthy in this process, with the (inode, size, mtime) they had: not checked again."""
_verified_guard = threading.Lock()


@contextmanager
def _build_lock(path: Path) -> Iterator[None]:
    """An exclusive lock beside the catalog while it is (re)built, so that workers starting together build once."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks; builds stay atomic anyway
        yield
        return
    lock_path = path.with_name(f".{path.name}.lock")
    try:
        handle = open(lock_path, "a+b")  # noqa: SIM115 - closed by the with below
    except OSError:  # a read-only folder: the build below reports it
        yield
        return
    with handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def keep_aside(path: Path, label: str) -> Path:
    """Rename a bad catalog to ``<name>.<label>-<UTC time>`` beside it (never deleted) and return the new path."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.{label}-{stamp}")
    counter = 1
    while os.path.lexists(target):
        counter += 1
        target = path.with_name(f"{path.name}.{label}-{stamp}-{counter}")
    os.replace(path, target)
    return target


def _unavailable(path: Path, error: OSError) -> CatalogUnavailableError:
    reason = error.strerror or str(error)
    return CatalogUnavailableError(
        f"cannot write the catalog {path} ({reason}); set GPU_ADVISOR_DB to a writable file, or build one with "
        f"`gpu-advisor catalog build --db PATH`"
    )


def ensure_catalog(db_path: Path | str | None = None) -> CatalogStatus:
    """A usable catalog at `db_path` (default: ``default_db_path()``), built or repaired when needed; see module.

    When the default location cannot be written (a read-only data folder), a catalog is built from the shipped
    snapshot in a private folder under the system temp dir instead, and the notice says so; an explicit path never
    falls back."""
    path, explicit = resolve_db_path(db_path)
    try:
        return _ensure_at(path, explicit)
    except CatalogUnavailableError as error:
        if explicit or not isinstance(error.__cause__, OSError):
            raise
        fallback = _private_fallback()
        if fallback is None:
            raise
        status = _ensure_at(fallback, explicit=True)
        notice = (
            f"{error.args[0].split(';')[0]}; using a catalog built from the shipped snapshot in {fallback} "
            f"instead (set GPU_ADVISOR_DB to choose where)"
        )
        return CatalogStatus(status.path, notice)


def _private_fallback() -> Path | None:
    """``<temp dir>/gpu-advisor-<uid>/catalog.sqlite`` in a folder only this user can write, or None."""
    folder = private_data_folder()
    return folder / DB_FILENAME if folder else None


def private_data_folder() -> Path | None:
    """``<temp dir>/gpu-advisor-<uid>``, created, when only this user can write it (the read-only fallback of the
    catalog and the threads), else None."""
    folder = Path(tempfile.gettempdir()) / f"gpu-advisor-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        stat = folder.stat()
    except OSError:
        return None
    if hasattr(os, "getuid") and (stat.st_uid != os.getuid() or stat.st_mode & 0o022):
        return None  # someone else's folder, or writable by others: not trusted
    return folder


def _ensure_at(path: Path, explicit: bool) -> CatalogStatus:
    """ensure_catalog for one resolved path."""
    signature = file_signature(path)
    with _verified_guard:
        if signature is not None and _verified.get(str(path)) == signature:
            return CatalogStatus(path)
    shipped = _shipped_date()
    fingerprint = snapshot_fingerprint()
    record = (*signature, fingerprint, shipped) if signature is not None else None
    checked_before = record is not None and _recorded(path) == list(record)
    check = inspect_catalog(path, deep=not checked_before, shipped_date=shipped, shipped_fingerprint=fingerprint)
    if check.state != "ok":
        check_status = _repair(path, explicit, check, shipped)
        if check_status is not None:
            built = file_signature(check_status.path)
            if built is not None and built != signature:  # a new file, built just now from the snapshot
                _record(check_status.path, [*built, fingerprint, shipped])
            return check_status
    with _verified_guard:
        signature = file_signature(path)
        if signature is not None:
            _verified[str(path)] = signature
            if not checked_before:
                _record(path, [*signature, fingerprint, shipped])
    return CatalogStatus(path)


def _records_file() -> Path | None:
    """Where the catalog versions that passed the deep check are recorded (the private temp folder)."""
    folder = private_data_folder()
    return folder / "verified-catalogs.json" if folder else None


def _recorded(path: Path) -> list[Any] | None:
    """The (inode, size, mtime, snapshot fingerprint, snapshot date) recorded when `path` last passed the deep
    check, or None."""
    records = _records_file()
    try:
        return json.loads(records.read_text("utf-8")).get(str(path.resolve())) if records else None
    except (OSError, ValueError, AttributeError):
        return None


def _record(path: Path, values: list[Any]) -> None:
    """Record that this version of `path` passed the deep check (later starts skip PRAGMA quick_check)."""
    records = _records_file()
    if records is None:
        return
    try:
        known = json.loads(records.read_text("utf-8")) if records.exists() else {}
        known = {k: v for k, v in known.items() if os.path.exists(k)} if isinstance(known, dict) else {}
        known[str(path.resolve())] = values
        partial = records.with_name(f"{records.name}.{os.getpid()}")
        partial.write_text(json.dumps(known), "utf-8")
        os.replace(partial, records)
    except (OSError, ValueError):
        pass  # no record: the next start checks again


def _repair(path: Path, explicit: bool, check: CatalogCheck, shipped: str | None) -> CatalogStatus | None:
    """Build, rebuild or refuse according to `check`; None when the file turned out fine after all."""
    if check.state == "foreign":
        raise NotACatalogError(
            f"{path} is not a gpu-advisor catalog ({check.reason}); it was left untouched. "
            f"Choose another --db path (or GPU_ADVISOR_DB), or move that file away"
        )
    if explicit and check.state == "missing" and not path.parent.is_dir():
        raise CatalogError(
            f"folder {path.parent} does not exist (not creating it for an explicit catalog path); "
            f"create it first or choose another path"
        )
    try:
        if not explicit:
            path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise _unavailable(path, error) from error
    with _build_lock(path):
        check = inspect_catalog(
            path,
            shipped_date=shipped,  # another process may have done it meanwhile
            shipped_fingerprint=snapshot_fingerprint(),
        )
        if check.state == "ok":
            return None
        if check.state == "foreign":
            raise NotACatalogError(f"{path} is not a gpu-advisor catalog ({check.reason}); it was left untouched")
        kept: Path | None = None
        user_built = check.meta.get("built_from") != "snapshot"  # unknown (unreadable meta): maybe the user's
        try:
            if check.state == "damaged" or (check.state == "outdated" and user_built):
                kept = keep_aside(path, "damaged" if check.state == "damaged" else "outdated")
            built = build_from_snapshot(path, create_parent=False)
        except OSError as error:
            if check.state == "outdated" and kept is None:  # still readable: use it as it is
                notice = f"catalog {path} is {check.reason} but could not be refreshed ({error.strerror}); using it"
                return CatalogStatus(path, notice)
            raise _unavailable(path, error) from error
    offers = inspect_catalog(built, deep=False).meta.get("offer_count")
    if check.state == "missing":
        return CatalogStatus(built)  # first use: nothing to tell
    what = {"damaged": f"was damaged ({check.reason})", "outdated": f"was outdated ({check.reason})"}[check.state]
    notice = f"catalog {path} {what}; rebuilt from the shipped snapshot ({offers} offers, {shipped})"
    if kept is not None:
        notice += f"; the old file is kept as {kept.name}"
        if user_built:
            notice += " (if it held your own catalog, run `gpu-advisor catalog update` or `catalog build --from` again)"
    return CatalogStatus(built, notice, kept)


def ensure_db(db_path: Path | str | None = None) -> Path:
    """Path of a usable catalog (``ensure_catalog``); a notice about a rebuild goes to the log."""
    status = ensure_catalog(db_path)
    if status.notice:
        log.warning(status.notice)
    return status.path
