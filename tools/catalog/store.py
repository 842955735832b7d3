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

import functools
import gzip
import hashlib
import json
import logging
import os
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.catalog.db import (
    SCHEMA_VERSION,
    CatalogCheck,
    CatalogError,
    CatalogUnavailableError,
    NotACatalogError,
    build_db,
    inspect_catalog,
)
from tools.catalog.names import DB_FILENAME, SNAPSHOT_FILE
from tools.catalog.offer import Offer

if TYPE_CHECKING:
    from tools.catalog.importers import ImportResult

log = logging.getLogger("gpu_advisor.catalog")


# ------------------------------------------------------------------------------------------------------------ paths


def _user_data_dir() -> Path:
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "gpu-advisor"


def default_db_path() -> Path:
    """``$GPU_ADVISOR_DB`` if set, else ``$GPU_ADVISOR_HOME/catalog.sqlite``, else the user data dir
    (``~/.local/share/gpu-advisor/catalog.sqlite`` on Linux, honouring ``$XDG_DATA_HOME``)."""
    explicit = os.environ.get("GPU_ADVISOR_DB")
    if explicit:
        return Path(explicit).expanduser()
    home = os.environ.get("GPU_ADVISOR_HOME")
    if home:
        return Path(home).expanduser() / DB_FILENAME
    return _user_data_dir() / DB_FILENAME


def resolve_db_path(db_path: Path | str | None) -> tuple[Path, bool]:
    """(path, explicit): explicit when given by the caller or $GPU_ADVISOR_DB (its folder is never created)."""
    if db_path:
        return Path(db_path).expanduser(), True
    return default_db_path(), bool(os.environ.get("GPU_ADVISOR_DB"))


# ---------------------------------------------------------------------------------------------------------- snapshot


def write_snapshot(path: Path, offers: Iterable[Offer], meta: dict[str, Any]) -> None:
    """Write offers as gzip'd JSON lines: a header object (kind, schema_version, source, snapshot_date, ...) then one
    offer per line. Deterministic bytes (gzip mtime 0) so an unchanged snapshot makes no diff."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as handle:
        header = {"kind": "gpu-advisor offers snapshot", "schema_version": SCHEMA_VERSION, **meta}
        handle.write((json.dumps(header, sort_keys=True) + "\n").encode())
        for offer in offers:
            handle.write((json.dumps(offer.model_dump(mode="json"), separators=(",", ":")) + "\n").encode())
    os.replace(tmp, path)


def read_snapshot(path: Path = SNAPSHOT_FILE) -> tuple[dict[str, Any], list[Offer]]:
    """(header, offers) of a snapshot written by ``write_snapshot``."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        header = json.loads(handle.readline())
        if header.get("kind") != "gpu-advisor offers snapshot":
            raise ValueError(f"{path} is not a gpu-advisor offers snapshot")
        offers = [Offer.model_validate_json(line) for line in handle if line.strip()]
    return header, offers


def snapshot_header(snapshot: Path = SNAPSHOT_FILE) -> dict[str, Any]:
    """The header line of a snapshot (source, snapshot_date, counts) without reading its offers."""
    with gzip.open(snapshot, "rt", encoding="utf-8") as handle:
        header: dict[str, Any] = json.loads(handle.readline())
    return header


def build_from_snapshot(
    db_path: Path | str | None = None, snapshot: Path = SNAPSHOT_FILE, *, create_parent: bool | None = None
) -> Path:
    """(Re)build the database from the shipped snapshot (the default path's folder is created when missing)."""
    path, explicit = resolve_db_path(db_path)
    header, offers = read_snapshot(snapshot)
    meta = {k: v for k, v in header.items() if k not in {"kind", "schema_version"}}
    meta["built_from"] = "snapshot"
    meta["snapshot_fingerprint"] = snapshot_fingerprint(snapshot)
    return build_db(path, offers, meta, create_parent=not explicit if create_parent is None else create_parent)


def build_from_catalog_dir(
    folder: Path | str,
    db_path: Path | str | None = None,
    *,
    source: str | None = None,
    snapshot_date: str | None = None,
) -> ImportResult:
    """(Re)build the database from a SkyPilot-format catalog folder; returns the ImportResult."""
    from tools.catalog.importers import import_catalog_dir

    path, explicit = resolve_db_path(db_path)
    result = import_catalog_dir(folder, source=source, snapshot_date=snapshot_date)
    if not result.offers:
        raise ValueError(f"no usable offers in {folder}; database left unchanged")
    meta = {
        "source": result.source,
        "snapshot_date": result.snapshot_date,
        "built_from": str(folder),
        "counts": result.counts,
        "issues": len(result.issues),
    }
    build_db(path, result.offers, meta, create_parent=not explicit)
    return result


def make_snapshot(
    folder: Path | str, out: Path | str = SNAPSHOT_FILE, *, source: str | None = None, snapshot_date: str | None = None
) -> ImportResult:
    """Import a SkyPilot-format catalog folder and write it as an offers snapshot (how the shipped one is made:
    ``gpu-advisor catalog snapshot --from ../shared/data/skypilot-catalog-v7``). Returns the ImportResult."""
    from tools.catalog.importers import import_catalog_dir

    result = import_catalog_dir(folder, source=source, snapshot_date=snapshot_date)
    meta = {
        "source": result.source,
        "snapshot_date": result.snapshot_date,
        "counts": result.counts,
        "issues": [str(i) for i in result.issues],
        "notes": result.notes,
    }
    write_snapshot(Path(out), result.offers, meta)
    return result


# ------------------------------------------------------------------------------------------------------- ensuring


@dataclass(frozen=True)
class CatalogStatus:
    """A usable catalog, and what was done to get it (a notice for the user, None when nothing was)."""

    path: Path
    notice: str | None = None
    kept_aside: Path | None = None


_verified: dict[str, tuple[int, int, int]] = {}
"""Catalog paths checked healthy in this process, with the (inode, size, mtime) they had: not checked again."""
_verified_guard = threading.Lock()


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def snapshot_fingerprint(snapshot: Path = SNAPSHOT_FILE) -> str | None:
    """A short hash of the shipped snapshot's bytes: a catalog built from another snapshot (same date, fixed rows or
    new indexes) is rebuilt. Cached per file version."""
    try:
        stat = snapshot.stat()
    except OSError:
        return None
    return _fingerprint(str(snapshot), stat.st_mtime_ns, stat.st_size)


@functools.cache
def _fingerprint(path: str, mtime_ns: int, size: int) -> str:
    """sha256 prefix of one version of a file."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def _shipped_date() -> str | None:
    try:
        return snapshot_header().get("snapshot_date")
    except (OSError, ValueError):
        return None


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
    signature = _signature(path)
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
            built = _signature(check_status.path)
            if built is not None and built != signature:  # a new file, built just now from the snapshot
                _record(check_status.path, [*built, fingerprint, shipped])
            return check_status
    with _verified_guard:
        signature = _signature(path)
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
