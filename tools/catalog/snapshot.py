"""The shipped offer snapshot: reading and writing it, its fingerprint and date, and building a catalog from it or
from a SkyPilot-format folder."""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.catalog.db import (
    SCHEMA_VERSION,
    build_db,
)
from tools.catalog.offer import Offer
from tools.catalog.paths import SNAPSHOT_FILE

if TYPE_CHECKING:
    from tools.catalog.importers import ImportResult

from tools.catalog.paths import resolve_db_path


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
    db_path: Path | str | None = None,
    snapshot: Path = SNAPSHOT_FILE,
    *,
    create_parent: bool | None = None,
    prepare: Callable[[Path], object] | None = None,
) -> Path:
    """(Re)build the database from the shipped snapshot (the default path's folder is created when missing)."""
    path, explicit = resolve_db_path(db_path)
    header, offers = read_snapshot(snapshot)
    meta = {k: v for k, v in header.items() if k not in {"kind", "schema_version"}}
    meta["built_from"] = "snapshot"
    meta["snapshot_fingerprint"] = snapshot_fingerprint(snapshot)
    parent = not explicit if create_parent is None else create_parent
    return build_db(path, offers, meta, create_parent=parent, prepare=prepare)


def build_from_catalog_dir(
    folder: Path | str,
    db_path: Path | str | None = None,
    *,
    source: str | None = None,
    snapshot_date: str | None = None,
    prepare: Callable[[Path], object] | None = None,
) -> ImportResult:
    """(Re)build the database from a SkyPilot-format catalog folder (`prepare`: as build_db's); returns the
    ImportResult."""
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
    build_db(path, result.offers, meta, create_parent=not explicit, prepare=prepare)
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


def file_signature(path: Path) -> tuple[int, int, int] | None:
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
