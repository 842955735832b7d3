"""The catalog of real GPU offers: queries, plus the names the rest of the code imports about the catalog.

* ``Offer`` (``tools/catalog/offer.py``) — one rentable instance type in one region/zone.
* ``query_offers(db_path, ...)`` filters and sorts with parameterised SQL only; indexes cover every filter.
* The SQLite file itself (schema, atomic ``build_db``, recognising our own files): ``tools/catalog/db.py``.
* Where it lives and keeping it usable (``default_db_path``, ``ensure_catalog``/``ensure_db``, the shipped snapshot):
  ``tools/catalog/store.py``.

The importer for SkyPilot-format catalogs is ``tools/catalog/importers/skypilot.py``; ``catalog update`` is
``tools/catalog/update.py``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tools.catalog.db import (
    APPLICATION_ID,
    MISSING,
    SCHEMA_VERSION,
    CatalogCheck,
    CatalogError,
    CatalogUnavailableError,
    NotACatalogError,
    build_db,
    catalog_stats,
    connect,
    current_meta,
    inspect_catalog,
    offer_row,
    read_meta,
)
from tools.catalog.offer import Interconnect, Offer
from tools.catalog.paths import DB_FILENAME, SNAPSHOT_FILE, SORTS, default_db_path, resolve_db_path
from tools.catalog.snapshot import (
    build_from_catalog_dir,
    build_from_snapshot,
    make_snapshot,
    read_snapshot,
    write_snapshot,
)
from tools.catalog.store import CatalogStatus, ensure_catalog, ensure_db

__all__ = [
    "APPLICATION_ID",
    "DB_FILENAME",
    "OFFER_FIELDS",
    "SCHEMA_VERSION",
    "SNAPSHOT_FILE",
    "SORTS",
    "CatalogCheck",
    "CatalogError",
    "CatalogStatus",
    "CatalogUnavailableError",
    "Interconnect",
    "NotACatalogError",
    "Offer",
    "build_db",
    "build_from_catalog_dir",
    "build_from_snapshot",
    "catalog_stats",
    "current_meta",
    "default_db_path",
    "ensure_catalog",
    "ensure_db",
    "inspect_catalog",
    "make_snapshot",
    "offer_row",
    "query_offers",
    "read_meta",
    "read_snapshot",
    "resolve_db_path",
    "write_snapshot",
]

OFFER_FIELDS = list(Offer.model_fields)
_BOOL_FIELDS = [name for name, info in Offer.model_fields.items() if info.annotation is bool]
_MISSING = MISSING


# ------------------------------------------------------------------------------------------------------------ query


def wish_filters(
    gpu: str | None, providers: tuple[str, ...] | None, regions: tuple[str, ...] | None
) -> tuple[list[str], list[Any]]:
    """WHERE clauses and parameters for the user's GPU, provider and region wishes (as query_offers reads them); a
    region wish may be a place word ('europe', 'EU', 'asia', 'japan', 'tokyo'), expanded by tools.catalog.regions."""
    from tools.gpus import gpu_family_names, parse_gpu_name

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
    if providers:
        from tools.providers import normalise_provider

        ids = sorted({normalise_provider(p) for p in providers if p})
        marks = ", ".join("?" for _ in ids)
        where.append(f"(provider_lc IN ({marks}) OR upstream_lc IN ({marks}))")
        params.extend([*ids, *ids])
    if regions:
        from tools.catalog.regions import region_sql  # place words ('europe', 'japan') cover the regions they name

        clause, values = region_sql(regions)
        where.append(clause)
        params.extend(values)
    return where, params


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
    if sort not in SORTS:
        raise ValueError(f"unknown sort {sort!r}; expected one of {', '.join(SORTS)}")
    if limit is not None and limit < 0:
        raise ValueError("limit must be >= 0")
    provider_list = tuple(p for p in ([provider] if provider else []) + list(providers or []) if p)
    region_list = tuple(r for r in ([region] if region else []) + list(regions or []) if r)
    where, params = wish_filters(gpu, provider_list or None, region_list or None)
    if gpu_count is not None:
        where.append("gpu_count = ?")
        params.append(int(gpu_count))
    if min_gpu_count is not None:
        where.append("gpu_count >= ?")
        params.append(int(min_gpu_count))
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
    with connect(path) as conn:
        if limit is not None and limit <= _TWO_PHASE_MAX:
            ids = _top_ids(
                conn, where, params, min_vram_gib, key, int(limit), selective=bool(gpu or provider_list or region_list)
            )
            if not ids:
                return []
            marks = ", ".join("?" for _ in ids)
            fetched = {
                row[0]: row[1:]
                for row in conn.execute(f"SELECT id, {', '.join(OFFER_FIELDS)} FROM offers WHERE id IN ({marks})", ids)
            }
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
    return [offer_from_row(row) for row in rows]


def offer_from_row(row: tuple[Any, ...]) -> Offer:
    """An Offer from a row of OFFER_FIELDS (already validated when the catalog was built)."""
    values = dict(zip(OFFER_FIELDS, row))
    for name in _BOOL_FIELDS:
        values[name] = bool(values[name])
    return Offer.model_construct(**values)


_TWO_PHASE_MAX = 5000
_SINGLE_KEY_SORTS = {"price_key", "spot_key", "ppg_key", "sppg_key"}


def _top_ids(
    conn: sqlite3.Connection,
    where: list[str],
    params: list[Any],
    min_vram: float | None,
    key: str,
    limit: int,
    *,
    selective: bool,
) -> list[int]:
    """Ids of the first `limit` offers in sort order, touching indexes only where possible (phase 1 of 2).

    A minimum-VRAM filter sorted by a price key is run as one index range per distinct VRAM size (few: one per GPU
    model), each walking the (vram, key) index in order and stopping after `limit` rows, then merged — instead of
    walking all offers in price order and skipping the small GPUs. Not used with a GPU, provider or region filter:
    those are selective and have their own (covering) indexes. Everything stays parameterised."""
    if limit == 0:
        return []
    if min_vram is not None and not selective and key in _SINGLE_KEY_SORTS:
        sizes = [
            v
            for (v,) in conn.execute(
                "SELECT value FROM json_each((SELECT value FROM meta WHERE key = 'vram_sizes')) WHERE value >= ?",
                (float(min_vram),),
            )
        ]
        if 0 < len(sizes) <= 64:
            extra = "".join(f" AND {clause}" for clause in where)
            branch = (
                f"SELECT * FROM (SELECT id, {key} AS k FROM offers WHERE vram_gib_per_gpu = ?{extra} "
                f"ORDER BY {key}, id LIMIT ?)"
            )
            sql = f"SELECT id FROM ({' UNION ALL '.join(branch for _ in sizes)}) ORDER BY k, id LIMIT ?"
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
