"""The catalog's SQLite file: its schema, how one is written (atomically, marked as ours), read, and recognised.

A catalog file carries ``PRAGMA application_id = APPLICATION_ID`` so that gpu-advisor can tell its own catalogs from
any other file before it writes anything: ``build_db`` never replaces a file it does not recognise
(``NotACatalogError``), and ``inspect_catalog`` says whether a file is ours and healthy, ours but damaged or
outdated, or someone else's. Catalogs built before the marker existed are recognised by their tables.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
import time
import typing
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from contract.errors import UserError
from tools.catalog.listings import SUMMARY_KEY, summarise
from tools.catalog.offer import Offer

SCHEMA_VERSION = 4
APPLICATION_ID = 0x47505541
"""'GPUA': written into the SQLite header (offset 68) of every catalog gpu-advisor builds."""
SQLITE_MAGIC = b"SQLite format 3\x00"


def _column_type(annotation: Any) -> type:
    """SQLite column type of an Offer field: int for bool/int, float, else text."""
    args = typing.get_args(annotation) or (annotation,)
    if bool in args:
        return int
    return next((kind for kind in (int, float) if kind in args), str)


OFFER_COLUMNS: dict[str, type] = {name: _column_type(info.annotation) for name, info in Offer.model_fields.items()}
"""One column per Offer field (a new field becomes a column; older catalogs then read as outdated and are rebuilt)."""
_COLUMNS: dict[str, type] = {
    **OFFER_COLUMNS,
    # derived, for filtering (lower case) and sorting (NOT NULL keys: a missing value sorts last, so an index on
    # the key alone serves ORDER BY key LIMIT n without a sort step)
    "gpu_lc": str,
    "provider_lc": str,
    "upstream_lc": str,
    "region_lc": str,
    "zone_lc": str,
    "price_key": float,
    "spot_key": float,
    "ppg_key": float,
    "sppg_key": float,
    "vram_key": float,
}

MISSING = 1e18
"""Sort key of a missing price or memory: after every real value."""

_INDEXES = [
    ["price_key"],
    ["spot_key"],
    ["ppg_key"],
    ["sppg_key"],
    ["vram_key"],
    ["gpu_lc", "gpu_count", "price_key"],
    ["gpu_lc", "ppg_key"],
    ["gpu_lc", "spot_key"],
    ["vram_gib_per_gpu", "price_key", "gpu_count"],
    ["vram_gib_per_gpu", "spot_key", "gpu_count"],
    ["vram_gib_per_gpu", "ppg_key", "gpu_count"],
    ["vram_gib_per_gpu", "sppg_key", "gpu_count"],
    ["provider_lc", "price_key"],
    ["upstream_lc"],
    ["region_lc", "provider_lc", "vram_gib_per_gpu", "price_key"],
    ["zone_lc", "provider_lc", "vram_gib_per_gpu", "price_key"],
    ["interconnect", "ppg_key"],
    ["gpu_count", "price_key"],
    # ranking candidates (tools.catalog.candidates): GROUP BY the first four with MIN(price/spot) walks this index
    ["provider", "instance_type", "price_outlier", "on_demand_is_market", "price_key", "spot_key"],
]


class CatalogError(UserError):
    """A catalog file that cannot be used or must not be touched; the message says what to do."""


class NotACatalogError(CatalogError):
    """The file at the catalog path is not a gpu-advisor catalog: it is left untouched."""


class CatalogUnavailableError(CatalogError):
    """The catalog cannot be read or built right now (damaged, read-only folder, permissions)."""


class CatalogMissingError(CatalogUnavailableError, FileNotFoundError):
    """There is no catalog file at the path (also a FileNotFoundError, as before)."""


# ---------------------------------------------------------------------------------------------------------- writing


def offer_row(offer: Offer) -> dict[str, Any]:
    """The database row of an offer: its fields plus derived sort/filter columns."""
    row = offer.model_dump()
    row["gpu_lc"] = offer.gpu.lower()
    row["provider_lc"] = offer.provider.lower()
    row["upstream_lc"] = (offer.upstream_provider or "").lower() or None
    row["region_lc"] = (offer.region or "").lower() or None
    row["zone_lc"] = (offer.zone or "").lower() or None
    row["price_key"] = _key(offer.price_per_hour)
    row["spot_key"] = _key(offer.spot_price_per_hour)
    row["ppg_key"] = _key(offer.price_per_gpu_hour)
    row["sppg_key"] = _key(offer.spot_price_per_gpu_hour)
    row["vram_key"] = MISSING if offer.vram_gib_per_gpu is None else -offer.vram_gib_per_gpu
    return row


def _key(value: float | None) -> float:
    return MISSING if value is None else value


def check_replaceable(db_path: Path) -> None:
    """Raise NotACatalogError unless `db_path` is absent or a gpu-advisor catalog (damaged ones included)."""
    if not os.path.lexists(db_path):
        return
    check = inspect_catalog(db_path, deep=False)
    if check.state == "foreign":
        raise NotACatalogError(
            f"{db_path} is not a gpu-advisor catalog ({check.reason}); it was left untouched. "
            f"Choose another --db path (or GPU_ADVISOR_DB), or move that file away"
        )


def build_db(
    db_path: Path | str,
    offers: Iterable[Offer | dict[str, Any]],
    meta: dict[str, Any],
    *,
    trusted_rows: bool = False,
    create_parent: bool = False,
    prepare: Callable[[Path], object] | None = None,
) -> Path:
    """Write a new SQLite catalog at `db_path` atomically: build a temp file beside it, then ``os.replace``.

    A reader never sees a half-built database, a failure leaves the old one untouched, and a file that is not a
    gpu-advisor catalog is never replaced (NotACatalogError). The parent folder must exist unless `create_parent`.
    trusted_rows: `offers` are already database rows (``offer_row``), inserted without validation (benchmarks).
    prepare: run on the finished file before it replaces the old one (what is derived from a catalog version, such as
    the comparison table's listings, is then ready when the version appears; the rename keeps the file's identity)."""
    db_path = Path(db_path).expanduser()
    if create_parent:
        db_path.parent.mkdir(parents=True, exist_ok=True)
    elif not db_path.parent.is_dir():
        raise CatalogError(
            f"folder {db_path.parent} does not exist (not creating it for an explicit catalog "
            f"path); create it first or choose another path"
        )
    check_replaceable(db_path)
    _remove_stale_temp_files(db_path.parent)
    fd, tmp_name = tempfile.mkstemp(prefix=".catalog-", suffix=".sqlite.tmp", dir=db_path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        import sqlite_utils  # imported here: it pulls in pandas (~0.35 s), which only building needs

        db = sqlite_utils.Database(tmp)
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        table = db.table("offers")
        assert isinstance(table, sqlite_utils.db.Table)
        table.create({"id": int, **_COLUMNS}, pk="id")
        count = 0
        columns = list(_COLUMNS)
        insert = f"INSERT INTO offers ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("PRAGMA synchronous = OFF")
        batch: list[tuple[Any, ...]] = []
        for item in offers:
            if trusted_rows:
                row = item  # type: ignore[assignment]
            else:
                row = offer_row(item if isinstance(item, Offer) else Offer.model_validate(item))
            batch.append(tuple(row.get(c) for c in columns))  # type: ignore[union-attr]
            if len(batch) >= 10_000:
                db.conn.executemany(insert, batch)
                count += len(batch)
                batch.clear()
        db.conn.executemany(insert, batch)
        count += len(batch)
        for index_columns in _INDEXES:
            table.create_index(index_columns)
        sizes = [
            row[0]
            for row in db.execute(
                "SELECT DISTINCT vram_gib_per_gpu FROM offers WHERE vram_gib_per_gpu IS NOT NULL ORDER BY 1"
            )
        ]
        full_meta = {
            "kind": "gpu-advisor catalog",
            "schema_version": SCHEMA_VERSION,
            "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "offer_count": count,
            **meta,
            "vram_sizes": sizes,
            SUMMARY_KEY: summarise(db.conn),  # counted once here, read by the comparison page's first request
        }
        db["meta"].insert_all(  # type: ignore[union-attr]
            ({"key": k, "value": json.dumps(v)} for k, v in full_meta.items()), pk="key", replace=True
        )
        db.execute("ANALYZE")
        db.conn.commit()
        db.close()  # type: ignore[no-untyped-call]
        with open(tmp, "rb+") as handle:  # on disk before the rename: a crash never leaves a half-written catalog
            os.fsync(handle.fileno())
        if prepare is not None:
            prepare(tmp)
        check_replaceable(db_path)  # again, just before the swap: the path may have changed while we built
        os.replace(tmp, db_path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return db_path


STALE_TEMP_S = 3600
"""A temp catalog file this old was left by a build that was killed (a build takes seconds)."""


def _remove_stale_temp_files(folder: Path) -> None:
    """Delete ``.catalog-*.sqlite.tmp`` files left in `folder` by builds killed over an hour ago."""
    cutoff = time.time() - STALE_TEMP_S
    for leftover in folder.glob(".catalog-*.sqlite.tmp"):
        try:
            if leftover.stat().st_mtime < cutoff:
                leftover.unlink()
        except OSError:
            pass


# ---------------------------------------------------------------------------------------------------------- reading


def read_meta(db_path: Path | str) -> dict[str, Any]:
    """The meta table of a catalog database (source, snapshot_date, built_at, offer_count, ...)."""
    with connect(db_path) as conn:
        return {key: json.loads(value) for key, value in conn.execute("SELECT key, value FROM meta")}


def current_meta(db_path: Path | str) -> dict[str, Any]:
    """read_meta, memoised per file version (size and modification time): turns read it on every ranking."""
    path = Path(db_path).expanduser()
    try:
        stat = path.stat()
    except OSError:
        return read_meta(path)  # says what is wrong with the path
    return dict(_meta_of_version(str(path), stat.st_size, stat.st_mtime_ns))


@lru_cache(maxsize=16)
def _meta_of_version(path: str, size: int, mtime_ns: int) -> dict[str, Any]:
    """read_meta for one version of the file."""
    return read_meta(path)


@contextmanager
def connect(db_path: Path | str) -> Iterator[sqlite3.Connection]:
    """Read-only connection, closed on exit; a damaged or unreadable file raises CatalogUnavailableError."""
    path = Path(db_path).expanduser()
    if not path.is_file():
        raise CatalogMissingError(f"catalog database not found: {path} (run `gpu-advisor catalog build`)")
    try:
        conn = sqlite3.connect(f"file:{path.resolve().as_posix()}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise CatalogUnavailableError(f"cannot open the catalog {path}: {error}") from error
    try:
        yield conn
    except (sqlite3.DatabaseError, json.JSONDecodeError) as error:
        raise CatalogUnavailableError(
            f"the catalog {path} is unreadable ({error}); rebuild it with `gpu-advisor catalog build`"
        ) from error
    finally:
        conn.close()


def catalog_stats(db_path: Path | str) -> dict[str, Any]:
    """Offer counts per provider and per GPU, plus the meta table."""
    with connect(db_path) as conn:
        providers = dict(conn.execute("SELECT provider, count(*) FROM offers GROUP BY provider ORDER BY provider"))
        gpus = dict(conn.execute("SELECT gpu, count(*) FROM offers GROUP BY gpu ORDER BY count(*) DESC"))
    return {"meta": read_meta(db_path), "offers_per_provider": providers, "offers_per_gpu": gpus}


# ------------------------------------------------------------------------------------------------------ recognising

CatalogState = Literal["missing", "ok", "outdated", "damaged", "foreign"]


@dataclass(frozen=True)
class CatalogCheck:
    """What a file at a catalog path is: missing, ours (ok / outdated / damaged) or someone else's (foreign)."""

    state: CatalogState
    reason: str = ""
    meta: dict[str, Any] = field(default_factory=dict)


def _header(path: Path) -> bytes:
    """The first 100 bytes (the SQLite header) of a file."""
    with open(path, "rb") as handle:
        return handle.read(100)


def inspect_catalog(
    db_path: Path | str, *, deep: bool = True, shipped_date: str | None = None, shipped_fingerprint: str | None = None
) -> CatalogCheck:
    """Recognise the file at `db_path` without changing it.

    foreign: not SQLite, another application's SQLite file, an empty file, a folder. damaged: our header but the
    content does not read back (deep: ``PRAGMA quick_check`` too). outdated: an older schema, or built from an older
    snapshot than `shipped_date` or from another version of it (`shipped_fingerprint`). Unreadable files
    (permissions) raise CatalogUnavailableError."""
    path = Path(db_path).expanduser()
    if not os.path.lexists(path):
        return CatalogCheck("missing")
    if not path.is_file():
        if not os.path.lexists(path):  # moved aside meanwhile (another worker's rebuild keeps the bad file)
            return CatalogCheck("missing")
        return CatalogCheck("foreign", "not a regular file")
    try:
        header = _header(path)
    except FileNotFoundError:  # the same, between the checks above and the read
        return CatalogCheck("missing")
    except OSError as error:
        raise CatalogUnavailableError(f"cannot read the catalog {path}: {error.strerror or error}") from error
    if not header:
        return CatalogCheck("foreign", "an empty file")
    if not header.startswith(SQLITE_MAGIC) or len(header) < 100:
        return CatalogCheck("foreign", "not an SQLite database")
    app_id = int.from_bytes(header[68:72], "big")
    if app_id not in (0, APPLICATION_ID):
        return CatalogCheck("foreign", f"an SQLite database of another application (application_id {app_id:#x})")
    try:
        with closing(sqlite3.connect(f"file:{path.resolve().as_posix()}?mode=ro", uri=True)) as conn:
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if app_id == 0 and not {"offers", "meta"} <= tables:
                return CatalogCheck("foreign", "an SQLite database without gpu-advisor's tables")
            meta = {key: json.loads(value) for key, value in conn.execute("SELECT key, value FROM meta")}
            if app_id == 0 and "schema_version" not in meta:
                return CatalogCheck("foreign", "an SQLite database without gpu-advisor's tables")
            if deep:
                problems = [row[0] for row in conn.execute("PRAGMA quick_check")]
                if problems != ["ok"]:
                    return CatalogCheck("damaged", "; ".join(str(p) for p in problems[:3]), meta)
                conn.execute("SELECT count(*) FROM offers").fetchone()
            columns = {row[1] for row in conn.execute("PRAGMA table_info(offers)")}
    except (sqlite3.DatabaseError, json.JSONDecodeError, ValueError) as error:
        if app_id == 0:
            return CatalogCheck("foreign", f"an SQLite database that does not read as a catalog ({error})")
        return CatalogCheck("damaged", str(error))
    except OSError as error:
        raise CatalogUnavailableError(f"cannot read the catalog {path}: {error.strerror or error}") from error
    if meta.get("schema_version") == SCHEMA_VERSION and not set(OFFER_COLUMNS) <= columns:
        missing = ", ".join(sorted(set(OFFER_COLUMNS) - columns))
        return CatalogCheck("outdated", f"built before the offer field(s) {missing} existed", meta)
    if meta.get("schema_version") != SCHEMA_VERSION:
        return CatalogCheck("outdated", f"schema version {meta.get('schema_version')}, expected {SCHEMA_VERSION}", meta)
    if shipped_date and meta.get("built_from") == "snapshot" and (meta.get("snapshot_date") or "") < shipped_date:
        return CatalogCheck(
            "outdated", f"built from the {meta.get('snapshot_date')} snapshot, {shipped_date} is shipped", meta
        )
    if (
        shipped_fingerprint
        and meta.get("built_from") == "snapshot"
        and meta.get("snapshot_fingerprint") != shipped_fingerprint
    ):
        return CatalogCheck("outdated", "built from another version of the shipped snapshot", meta)
    return CatalogCheck("ok", "", meta)
