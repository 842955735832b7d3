"""The catalog of real GPU offers: the ``Offer`` schema, the SQLite database (sqlite-utils), queries, and the shipped
offline snapshot.

* ``Offer`` (defined in ``tools/offer.py``, re-exported) — one rentable instance type in one region/zone.
* ``build_db(db_path, offers, meta)`` writes a new database atomically (temp file + ``os.replace``).
* ``query_offers(db_path, ...)`` filters and sorts with parameterised SQL only; indexes cover every filter.
* ``default_db_path()`` / ``ensure_db()`` — where the database lives (``$GPU_ADVISOR_DB``, else
  ``$GPU_ADVISOR_HOME/catalog.sqlite``, else the user data dir) and building it from the shipped snapshot
  ``tools/data/offers-snapshot.jsonl.gz`` on first use, so a fresh install works offline.

The importer for SkyPilot-format catalogs is ``tools/catalog_import.py``; ``catalog update`` is
``tools/catalog_update.py``.
"""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import sqlite_utils
from tools.offer import Interconnect, Offer

__all__ = ["Interconnect", "Offer"]

SCHEMA_VERSION = 4
SNAPSHOT_FILE = Path(__file__).parent / "data" / "offers-snapshot.jsonl.gz"
DB_FILENAME = "catalog.sqlite"

OFFER_FIELDS = list(Offer.model_fields)

_COLUMNS: dict[str, type] = {
    "provider": str, "upstream_provider": str, "instance_type": str, "region": str, "zone": str, "gpu": str,
    "gpu_form_factor": str, "accelerator_name": str, "gpu_count": int, "vram_gib_per_gpu": float, "vcpus": float,
    "host_ram_gib": float, "price_per_hour": float, "spot_price_per_hour": float, "interconnect": str,
    "nvlink_gbs": float, "inter_node_fabric": str, "inter_node_gbps_per_gpu": float, "source": str,
    "snapshot_date": str,
    # derived, for filtering (lower case) and sorting (NOT NULL keys: a missing value sorts last, so an index on
    # the key alone serves ORDER BY key LIMIT n without a sort step)
    "gpu_lc": str, "provider_lc": str, "upstream_lc": str, "region_lc": str, "zone_lc": str,
    "price_key": float, "spot_key": float, "ppg_key": float, "sppg_key": float, "vram_key": float,
}

_MISSING = 1e18
"""Sort key of a missing price or memory: after every real value."""

_INDEXES = [
    ["price_key"], ["spot_key"], ["ppg_key"], ["sppg_key"], ["vram_key"],
    ["gpu_lc", "gpu_count", "price_key"], ["gpu_lc", "ppg_key"], ["gpu_lc", "spot_key"],
    ["vram_gib_per_gpu", "price_key", "gpu_count"], ["vram_gib_per_gpu", "spot_key", "gpu_count"],
    ["vram_gib_per_gpu", "ppg_key", "gpu_count"], ["vram_gib_per_gpu", "sppg_key", "gpu_count"],
    ["provider_lc", "price_key"], ["upstream_lc"],
    ["region_lc", "provider_lc", "vram_gib_per_gpu", "price_key"],
    ["zone_lc", "provider_lc", "vram_gib_per_gpu", "price_key"],
    ["interconnect", "ppg_key"], ["gpu_count", "price_key"],
]

SORTS: dict[str, str] = {
    "price": "price_key",
    "spot_price": "spot_key",
    "price_per_gpu": "ppg_key",
    "spot_price_per_gpu": "sppg_key",
    "vram": "vram_key",
    "gpu_count": "gpu_count, price_key",
}
"""Whitelisted ORDER BY clauses; user input only selects a key, it is never put into SQL."""


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


# ---------------------------------------------------------------------------------------------------------- database


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
    row["vram_key"] = _MISSING if offer.vram_gib_per_gpu is None else -offer.vram_gib_per_gpu
    return row


def _key(value: float | None) -> float:
    return _MISSING if value is None else value


def build_db(db_path: Path | str, offers: Iterable[Offer | dict[str, Any]], meta: dict[str, Any], *,
             trusted_rows: bool = False) -> Path:
    """Write a new SQLite catalog at `db_path` atomically: build a temp file beside it, then ``os.replace``.
    A reader never sees a half-built database, and a failure leaves the old one untouched.
    trusted_rows: `offers` are already database rows (``offer_row``), inserted without validation (benchmarks)."""
    db_path = Path(db_path).expanduser()
    db_path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=".catalog-", suffix=".sqlite.tmp", dir=db_path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        db = sqlite_utils.Database(tmp)
        table = db.table("offers")
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
        sizes = [row[0] for row in db.execute(
            "SELECT DISTINCT vram_gib_per_gpu FROM offers WHERE vram_gib_per_gpu IS NOT NULL ORDER BY 1")]
        full_meta = {"schema_version": SCHEMA_VERSION, "built_at": datetime.now(timezone.utc).isoformat(
            timespec="seconds"), "offer_count": count, **meta, "vram_sizes": sizes}
        db.table("meta").insert_all(({"key": k, "value": json.dumps(v)} for k, v in full_meta.items()), pk="key",
                                    replace=True)
        db.execute("ANALYZE")
        db.conn.commit()
        db.close()
        os.replace(tmp, db_path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return db_path


def read_meta(db_path: Path | str) -> dict[str, Any]:
    """The meta table of a catalog database (source, snapshot_date, built_at, offer_count, ...)."""
    with _connect(db_path) as conn:
        return {key: json.loads(value) for key, value in conn.execute("SELECT key, value FROM meta")}


@contextmanager
def _connect(db_path: Path | str) -> Iterator[sqlite3.Connection]:
    """Read-only connection, closed on exit."""
    path = Path(db_path).expanduser()
    if not path.is_file():
        raise FileNotFoundError(f"catalog database not found: {path} (run `gpu-advisor catalog build`)")
    conn = sqlite3.connect(f"file:{path.resolve().as_posix()}?mode=ro", uri=True)
    try:
        yield conn
    finally:
        conn.close()


def build_from_snapshot(db_path: Path | str | None = None, snapshot: Path = SNAPSHOT_FILE) -> Path:
    """(Re)build the database from the shipped snapshot."""
    header, offers = read_snapshot(snapshot)
    meta = {k: v for k, v in header.items() if k not in {"kind", "schema_version"}}
    meta["built_from"] = "snapshot"
    return build_db(db_path or default_db_path(), offers, meta)


def build_from_catalog_dir(folder: Path | str, db_path: Path | str | None = None, *, source: str | None = None,
                           snapshot_date: str | None = None):
    """(Re)build the database from a SkyPilot-format catalog folder; returns the ImportResult."""
    from tools.catalog_import import import_catalog_dir

    result = import_catalog_dir(folder, source=source, snapshot_date=snapshot_date)
    if not result.offers:
        raise ValueError(f"no usable offers in {folder}; database left unchanged")
    meta = {"source": result.source, "snapshot_date": result.snapshot_date, "built_from": str(folder),
            "counts": result.counts, "issues": len(result.issues)}
    build_db(db_path or default_db_path(), result.offers, meta)
    return result


def ensure_db(db_path: Path | str | None = None) -> Path:
    """Path of a usable catalog database, building it from the shipped snapshot when it is missing, unreadable or of
    an older schema, or when it was built from an older snapshot than the one shipped now."""
    path = Path(db_path).expanduser() if db_path else default_db_path()
    if path.is_file():
        try:
            meta = read_meta(path)
        except (sqlite3.DatabaseError, FileNotFoundError, ValueError):
            meta = {}
        if meta.get("schema_version") == SCHEMA_VERSION:
            if meta.get("built_from") != "snapshot":
                return path  # built by the user from a catalog folder or `catalog update`: keep it
            try:
                shipped = _snapshot_header().get("snapshot_date")
            except OSError:
                return path
            if not shipped or (meta.get("snapshot_date") or "") >= shipped:
                return path
    return build_from_snapshot(path)


def _snapshot_header(snapshot: Path = SNAPSHOT_FILE) -> dict[str, Any]:
    with gzip.open(snapshot, "rt", encoding="utf-8") as handle:
        return json.loads(handle.readline())


# ------------------------------------------------------------------------------------------------------------ query


def query_offers(
    db_path: Path | str | None = None,
    *,
    min_vram_gib: float | None = None,
    gpu: str | None = None,
    gpu_count: int | None = None,
    min_gpu_count: int | None = None,
    provider: str | None = None,
    providers: Iterable[str] | None = None,
    region: str | None = None,
    regions: Iterable[str] | None = None,
    spot_only: bool = False,
    max_price: float | None = None,
    interconnect: str | None = None,
    sort: str = "price",
    limit: int | None = None,
) -> list[Offer]:
    """Offers matching every filter given, sorted.

    gpu: any spelling; a bare family name ('A100', 'V100') matches every memory size, a form factor in the name
    ('H100-SXM', 'A100 80GB PCIe') also filters on it. min_vram_gib: per GPU. max_price: on-demand USD/hour for the
    whole instance, or the spot price with spot_only. region matches the region or the zone, case-insensitively.
    sort: one of SORTS ('price', 'spot_price', 'price_per_gpu', 'spot_price_per_gpu', 'vram', 'gpu_count').
    Only parameterised SQL: values never reach the SQL text."""
    from tools.gpus import gpu_family_names, parse_gpu_name

    if sort not in SORTS:
        raise ValueError(f"unknown sort {sort!r}; expected one of {', '.join(SORTS)}")
    if limit is not None and limit < 0:
        raise ValueError("limit must be >= 0")
    where: list[str] = []
    params: list[Any] = []
    if gpu:
        names = gpu_family_names(gpu) or [gpu.strip()]
        where.append(f"gpu_lc IN ({', '.join('?' for _ in names)})")
        params.extend(n.lower() for n in names)
        parsed = parse_gpu_name(gpu)
        if parsed and parsed.form_factor:
            where.append("gpu_form_factor = ?")
            params.append(parsed.form_factor)
    if gpu_count is not None:
        where.append("gpu_count = ?")
        params.append(int(gpu_count))
    if min_gpu_count is not None:
        where.append("gpu_count >= ?")
        params.append(int(min_gpu_count))
    provider_list = [p for p in ([provider] if provider else []) + list(providers or []) if p]
    if provider_list:
        from tools.providers import normalise_provider

        ids = sorted({normalise_provider(p) for p in provider_list})
        where.append(f"(provider_lc IN ({', '.join('?' for _ in ids)}) OR upstream_lc IN "
                     f"({', '.join('?' for _ in ids)}))")
        params.extend(ids)
        params.extend(ids)
    region_list = [r for r in ([region] if region else []) + list(regions or []) if r]
    if region_list:
        lowered = [r.strip().lower() for r in region_list]
        marks = ", ".join("?" for _ in lowered)
        where.append(f"(region_lc IN ({marks}) OR zone_lc IN ({marks}))")
        params.extend(lowered)
        params.extend(lowered)
    if spot_only:
        where.append("spot_key < ?")  # = has a spot price; on the key so that indexes can answer it
        params.append(_MISSING)
    if max_price is not None:
        where.append("spot_key <= ?" if spot_only else "price_key <= ?")
        params.append(min(float(max_price), _MISSING / 2))
    if interconnect:
        where.append("interconnect = ?")
        params.append(interconnect.strip().lower())
    path = Path(db_path).expanduser() if db_path else ensure_db()
    key = SORTS[sort]
    with _connect(path) as conn:
        if limit is not None and limit <= _TWO_PHASE_MAX:
            ids = _top_ids(conn, where, params, min_vram_gib, key, int(limit),
                           selective=bool(gpu or provider_list or region_list))
            if not ids:
                return []
            marks = ", ".join("?" for _ in ids)
            fetched = {row[0]: row[1:] for row in conn.execute(
                f"SELECT id, {', '.join(OFFER_FIELDS)} FROM offers WHERE id IN ({marks})", ids)}
            rows = [fetched[i] for i in ids]
        else:
            clauses = where + (["vram_gib_per_gpu >= ?"] if min_vram_gib is not None else [])
            values = params + ([float(min_vram_gib)] if min_vram_gib is not None else [])
            sql = f"SELECT {', '.join(OFFER_FIELDS)} FROM offers"
            if clauses:
                sql += " WHERE " + " AND ".join(clauses)
            sql += f" ORDER BY {key}, id"
            if limit is not None:
                sql += " LIMIT ?"
                values.append(int(limit))
            rows = conn.execute(sql, values).fetchall()
    return [Offer.model_construct(**dict(zip(OFFER_FIELDS, row))) for row in rows]


_TWO_PHASE_MAX = 5000
_SINGLE_KEY_SORTS = {"price_key", "spot_key", "ppg_key", "sppg_key"}


def _top_ids(conn: sqlite3.Connection, where: list[str], params: list[Any], min_vram: float | None, key: str,
             limit: int, *, selective: bool) -> list[int]:
    """Ids of the first `limit` offers in sort order, touching indexes only where possible (phase 1 of 2).

    A minimum-VRAM filter sorted by a price key is run as one index range per distinct VRAM size (few: one per GPU
    model), each walking the (vram, key) index in order and stopping after `limit` rows, then merged — instead of
    walking all offers in price order and skipping the small GPUs. Not used with a GPU, provider or region filter:
    those are selective and have their own (covering) indexes. Everything stays parameterised."""
    if limit == 0:
        return []
    if min_vram is not None and not selective and key in _SINGLE_KEY_SORTS:
        sizes = [v for (v,) in conn.execute(
            "SELECT value FROM json_each((SELECT value FROM meta WHERE key = 'vram_sizes')) WHERE value >= ?",
            (float(min_vram),))]
        if 0 < len(sizes) <= 64:
            extra = "".join(f" AND {clause}" for clause in where)
            branch = (f"SELECT * FROM (SELECT id, {key} AS k FROM offers WHERE vram_gib_per_gpu = ?{extra} "
                      f"ORDER BY {key}, id LIMIT ?)")
            sql = (f"SELECT id FROM ({' UNION ALL '.join(branch for _ in sizes)}) ORDER BY k, id LIMIT ?")
            values: list[Any] = []
            for size in sizes:
                values.extend([size, *params, limit])
            values.append(limit)
            return [row[0] for row in conn.execute(sql, values)]
    clauses = where + (["vram_gib_per_gpu >= ?"] if min_vram is not None else [])
    values = params + ([float(min_vram)] if min_vram is not None else [])
    sql = "SELECT id FROM offers" + (" WHERE " + " AND ".join(clauses) if clauses else "")
    sql += f" ORDER BY {key}, id LIMIT ?"
    return [row[0] for row in conn.execute(sql, [*values, limit])]


def catalog_stats(db_path: Path | str) -> dict[str, Any]:
    """Offer counts per provider and per GPU, plus the meta table."""
    with _connect(db_path) as conn:
        providers = dict(conn.execute("SELECT provider, count(*) FROM offers GROUP BY provider ORDER BY provider"))
        gpus = dict(conn.execute("SELECT gpu, count(*) FROM offers GROUP BY gpu ORDER BY count(*) DESC"))
    return {"meta": read_meta(db_path), "offers_per_provider": providers, "offers_per_gpu": gpus}


def make_snapshot(folder: Path | str, out: Path | str = SNAPSHOT_FILE, *, source: str | None = None,
                  snapshot_date: str | None = None):
    """Import a SkyPilot-format catalog folder and write it as an offers snapshot (how the shipped one is made:
    ``gpu-advisor catalog snapshot --from ../shared/data/skypilot-catalog-v7``). Returns the ImportResult."""
    from tools.catalog_import import import_catalog_dir

    result = import_catalog_dir(folder, source=source, snapshot_date=snapshot_date)
    meta = {"source": result.source, "snapshot_date": result.snapshot_date, "counts": result.counts,
            "issues": [str(i) for i in result.issues], "notes": result.notes}
    write_snapshot(Path(out), result.offers, meta)
    return result
