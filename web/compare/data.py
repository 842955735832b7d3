"""The comparison table's data: every listing of the catalog (one instance at one price pair, its regions and zones
grouped), filtered, sorted and paged by SQLite in the derived store (web.compare.store); with a job, joined with
the job's priced table (web.compare.costs). Counts are cached per query, so later pages cost one index walk."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from contract.languages import Language
from tools.catalog import MISSING
from tools.lru import Lru
from web.compare.costs import job_sort_index
from web.compare.store import sort_index

SortKey = Literal[
    "gpu",
    "vram",
    "count",
    "interconnect",
    "provider",
    "region",
    "price",
    "spot_price",
    "price_per_gpu",
    "billing",
    "job_cost",
    "hours",
    "per_gpu_gib",
]
JOB_SORTS = frozenset({"job_cost", "hours", "per_gpu_gib"})
MAX_PAGE_SIZE = 200


class CompareQuery(BaseModel):
    """Filters, sort and page of the comparison table (all optional)."""

    model_config = ConfigDict(extra="forbid")

    q: str | None = Field(
        None, max_length=200, description="Words that must all appear in GPU, provider, instance type or region."
    )
    gpu: str | None = Field(None, max_length=60, description="Exact GPU name, e.g. H100.")
    provider: str | None = Field(None, max_length=60, description="Exact provider id, e.g. aws.")
    region: str | None = Field(None, max_length=60, description="Part of the region or zone name.")
    interconnect: str | None = Field(None, max_length=40, description="GPU-to-GPU link: nvlink, pcie, none, ...")
    gpu_count: int | None = Field(None, ge=1, le=1024, description="GPUs per instance.")
    min_vram: float | None = Field(None, ge=0, le=4096, description="Minimum GiB per GPU.")
    max_price: float | None = Field(None, ge=0, description="Maximum on-demand USD/hour per instance.")
    spot: bool = Field(False, description="Only offers with a spot price.")
    sort: SortKey | None = Field(None, description="Column to sort by; default price, or job_cost with a job.")
    order: Literal["asc", "desc"] = "asc"
    page: int = Field(1, ge=1, le=100_000)
    page_size: int = Field(50, ge=1, le=MAX_PAGE_SIZE)
    job: str | None = Field(
        None,
        max_length=4000,
        description="A job in words (it/id/en) or a JobSpec as JSON: adds fit, memory, hours and job cost per offer.",
    )
    lang: Language | None = Field(None, description="Language of a job given in words.")
    fits_only: bool = Field(True, description="With a job: only offers the job runs on.")


_ROW_COLUMNS = (
    "id",
    "provider",
    "instance_type",
    "gpu",
    "gpu_form_factor",
    "gpu_count",
    "vram_gib_per_gpu",
    "interconnect",
    "region",
    "price_per_hour",
    "spot_price_per_hour",
    "price_per_gpu_hour",
    "snapshot_date",
    "billing_s",
    "billing_assumed",
    "offers",
)
_JOB_COLUMNS = ("spot", "cost", "hours", "per_gpu", "nodes", "layout")
_SORTS: dict[str, tuple[str, str | None]] = {
    # column to order by, and the condition of a missing value (sorted last in both orders)
    "gpu": ("r.gpu_lc", None),
    "vram": ("r.vram_key", f"r.vram_key >= {MISSING}"),
    "count": ("r.gpu_count", None),
    "interconnect": ("r.interconnect", None),
    "provider": ("r.provider_lc", None),
    "region": ("r.region_lc", "r.region_lc IS NULL"),
    "price": ("r.price_key", f"r.price_key >= {MISSING}"),
    "spot_price": ("r.spot_key", f"r.spot_key >= {MISSING}"),
    "price_per_gpu": ("r.ppg_key", f"r.ppg_key >= {MISSING}"),
    "billing": ("r.billing_s", None),
    "job_cost": ("j.cost", "j.id IS NULL"),
    "hours": ("j.hours", "j.id IS NULL"),
    "per_gpu_gib": ("j.per_gpu", "j.id IS NULL"),
}
_REVERSED = frozenset({"vram"})
"""Sorts whose key runs the other way (vram_key is minus the memory)."""
_COUNTS: Lru[tuple[Any, ...], int] = Lru(512)
"""Row counts per store, job and filters."""
_CHARTS: Lru[tuple[Any, ...], list[dict[str, Any]]] = Lru(64)
"""Chart points per store, job and filters."""
_IDS: Lru[tuple[Any, ...], list[int]] = Lru(8)
"""Row ids in page order of the small views (SMALL_VIEW)."""
SMALL_VIEW = 150_000
"""Filtered views up to this many rows are ordered once by a scan and kept as id lists (pages are then slices)."""
_FILTER_INDEXES = {"gpu": "gpu_lc", "provider": "provider_lc", "interconnect": "interconnect", "gpu_count": "gpu_count"}
"""Equality filters and the listing column whose index (created on first use) serves them."""


def filters_sql(query: CompareQuery) -> tuple[list[str], list[Any]]:
    """WHERE clauses over the listings (alias r) for the query's filters."""
    where: list[str] = []
    params: list[Any] = []
    if query.gpu:
        where.append("r.gpu_lc = ?")
        params.append(query.gpu.strip().lower())
    if query.provider:
        where.append("r.provider_lc = ?")
        params.append(query.provider.strip().lower())
    if query.region:
        where.append("r.places_lc LIKE ? ESCAPE '\\'")
        params.append(_like(query.region))
    if query.interconnect:
        where.append("r.interconnect = ?")
        params.append(query.interconnect.strip().lower())
    if query.gpu_count is not None:
        where.append("r.gpu_count = ?")
        params.append(query.gpu_count)
    if query.min_vram is not None:
        where.append("r.vram_gib_per_gpu >= ?")
        params.append(query.min_vram)
    if query.max_price is not None:
        where.append("r.price_key <= ?")
        params.append(query.max_price)
    if query.spot:
        where.append(f"r.spot_key < {MISSING}")
    for word in (query.q or "").lower().split():
        where.append("r.words LIKE ? ESCAPE '\\'")
        params.append(_like(word))
    return where, params


def _like(text: str) -> str:
    """A LIKE pattern matching `text` anywhere (its own % and _ taken literally)."""
    escaped = text.strip().lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _count(conn: sqlite3.Connection, key: tuple[Any, ...], sql: str, params: list[Any]) -> int:
    """A count, cached per store, job and filters (later pages of a view reuse it)."""
    return _COUNTS.get_or_make(key, lambda: conn.execute(sql, params).fetchone()[0])


def select_page(
    conn: sqlite3.Connection, store: Path, query: CompareQuery, job: str | None
) -> tuple[int, str, list[dict[str, Any]]]:
    """(rows matching, the sort used, the requested page of rows): filtered, sorted and paged in SQL, values missing
    for the sort last in both orders."""
    sort = query.sort or ("job_cost" if job else "price")
    if sort in JOB_SORTS and not job:
        sort = "price"
    where, params = filters_sql(query)
    source = "rows r"
    if job:
        source = (
            f"{job} j JOIN rows r ON r.id = j.id" if query.fits_only else f"rows r LEFT JOIN {job} j ON j.id = r.id"
        )
    filters = " AND ".join(where) or "1"
    key = (store.name, job, query.fits_only, filters, tuple(params))
    counted = f"{job} j" if job and query.fits_only and not where else source  # no filter: the job table alone
    total = _count(conn, key, f"SELECT count(*) FROM {counted} WHERE {filters}", params)
    column, missing = _SORTS[sort]
    if job and column.startswith("j."):
        job_sort_index(conn, job, column[2:])
    for name in [column[2:] if column.startswith("r.") else None] + [
        _FILTER_INDEXES[f] for f in _FILTER_INDEXES if getattr(query, f) not in (None, "")
    ]:
        if name:
            sort_index(conn, store, name)
    if job is None or (query.fits_only and missing == "j.id IS NULL"):
        missing = None if missing == "j.id IS NULL" else missing
    descending = (query.order == "desc") != (sort in _REVERSED)
    direction = "DESC" if descending else "ASC"
    start = (query.page - 1) * query.page_size
    present = total
    if missing:
        present = total - _count(
            conn, (*key, missing), f"SELECT count(*) FROM {source} WHERE {filters} AND {missing}", params
        )
    picked = ", ".join([f"r.{c}" for c in _ROW_COLUMNS] + [f"j.{c}" if job else f"NULL AS {c}" for c in _JOB_COLUMNS])
    if where and total <= SMALL_VIEW:  # a selective filter: one scan and sort, kept, beats walking a sort index
        ids = _ordered_ids(
            conn,
            (*key, column, direction),
            source,
            filters,
            params,
            f"+{column} {direction}, r.id {direction}"
            if column.startswith("j.")
            else f"+{column} {direction}, +r.price_key {direction}, r.id {direction}",
            missing,
        )
        chosen = ids[start : start + query.page_size]
        marks = ", ".join("?" for _ in chosen)
        by_id = (
            {row[0]: row for row in conn.execute(f"SELECT {picked} FROM {source} WHERE r.id IN ({marks})", chosen)}
            if chosen
            else {}
        )
        return total, sort, _shaped(conn, [by_id[i] for i in chosen], job is not None)
    found: list[tuple[Any, ...]] = []
    if start < present:
        cond = f" AND NOT ({missing})" if missing else ""
        if column.startswith("j."):  # walk the job table's own index, then fetch the page
            inner = f"{job} j" + (" JOIN rows r ON r.id = j.id" if where else "")
            order = f"{column} {direction}, j.id {direction}"
            found = conn.execute(
                f"SELECT {picked} FROM (SELECT j.* FROM {inner} WHERE {filters} ORDER BY {order} "
                f"LIMIT ? OFFSET ?) j JOIN rows r ON r.id = j.id ORDER BY {order}",
                [*params, query.page_size, start],
            ).fetchall()
        else:
            found = conn.execute(
                f"SELECT {picked} FROM {source} WHERE {filters}{cond} ORDER BY {column} "
                f"{direction}, r.price_key {direction}, r.id {direction} LIMIT ? OFFSET ?",
                [*params, query.page_size, start],
            ).fetchall()
    if missing and len(found) < query.page_size and start + len(found) < total:
        found += conn.execute(
            f"SELECT {picked} FROM {source} WHERE {filters} AND {missing} ORDER BY r.price_key, r.id LIMIT ? OFFSET ?",
            [*params, query.page_size - len(found), max(0, start - present)],
        ).fetchall()
    return total, sort, _shaped(conn, found, job is not None)


def _ordered_ids(
    conn: sqlite3.Connection,
    key: tuple[Any, ...],
    source: str,
    filters: str,
    params: list[Any],
    order: str,
    missing: str | None,
) -> list[int]:
    """Every matching row id in page order (values missing for the sort last), cached per view."""
    found = _IDS.get(key)
    if found is not None:
        return found
    cond = f" AND NOT ({missing})" if missing else ""
    ids = [i for (i,) in conn.execute(f"SELECT r.id FROM {source} WHERE {filters}{cond} ORDER BY {order}", params)]
    if missing:
        ids += [
            i
            for (i,) in conn.execute(
                f"SELECT r.id FROM {source} WHERE {filters} AND {missing} ORDER BY +r.price_key, r.id", params
            )
        ]
    return _IDS.put(key, ids)


def _shaped(conn: sqlite3.Connection, found: list[tuple[Any, ...]], with_job: bool) -> list[dict[str, Any]]:
    """Rows as the API returns them, with their regions and zones."""
    ids = [row[0] for row in found]
    places: dict[int, list[tuple[Any, Any]]] = {i: [] for i in ids}
    if ids:
        marks = ", ".join("?" for _ in ids)
        for row_id, region, zone in conn.execute(
            f"SELECT row_id, region, zone FROM places WHERE row_id IN ({marks}) ORDER BY row_id, region, zone", ids
        ):
            places[row_id].append((region, zone))
    return shaped_rows(found, places, with_job)


def shaped_rows(
    found: list[tuple[Any, ...]], places: dict[int, list[tuple[Any, Any]]], with_job: bool
) -> list[dict[str, Any]]:
    """Rows as the API returns them: _ROW_COLUMNS (and the job's columns), with each row's (region, zone) pairs in
    the store's order grouped into its regions and zones."""
    rows = []
    for values in found:
        row = dict(zip(_ROW_COLUMNS, values[: len(_ROW_COLUMNS)]))
        row["billing_assumed"] = bool(row["billing_assumed"])
        regions: list[str] = []
        zones: list[str] = []
        for region, zone in places[row.pop("id")]:
            if region and region not in regions:
                regions.append(region)
            if zone and zone not in zones:
                zones.append(zone)
        row["regions"], row["zones"] = regions, zones
        row["region"] = regions[0] if regions else row["region"]
        if with_job:
            spot, cost, hours, per_gpu, nodes, layout = values[len(_ROW_COLUMNS) :]
            row["job"] = (
                {"fits": False}
                if cost is None
                else {
                    "fits": True,
                    "per_gpu_gib": per_gpu,
                    "est_hours": hours,
                    "est_cost": cost,
                    "spot": bool(spot),
                    "nodes": nodes,
                    "total_gpus": row["gpu_count"] * nodes,
                    "layout": layout,
                }
            )
        rows.append(row)
    return rows


def chart_points(conn: sqlite3.Connection, store_key: str, query: CompareQuery, job: str) -> list[dict[str, Any]]:
    """The cheapest listing at each job duration among the rows the filters keep (hours are a shape's, so there
    are a few hundred), each marked when it is on the Pareto front (no listing both cheaper and faster)."""
    where, params = filters_sql(query)
    filters = " AND ".join(where) or "1"
    key = ("chart", store_key, job, filters, tuple(params))
    found = _CHARTS.get(key)
    if found is not None:
        return found
    source = f"{job} j JOIN rows r ON r.id = j.id" if where else f"{job} j"
    cheapest = conn.execute(
        f"SELECT j.hours, min(j.cost), j.id, j.spot, j.nodes FROM {source} WHERE {filters} GROUP BY j.hours "
        "ORDER BY j.hours",
        params,
    ).fetchall()
    points = chart_from(conn, cheapest)
    return _CHARTS.put(key, points)


def chart_from(conn: sqlite3.Connection, cheapest: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """Chart points from (hours, cost, id, spot, nodes) of the cheapest listing per duration, in hours order."""
    ids = [row[2] for row in cheapest]
    facts: dict[int, tuple[Any, ...]] = {}
    if ids:
        marks = ", ".join("?" for _ in ids)
        for row in conn.execute(
            f"SELECT r.id, r.gpu, r.gpu_count, r.provider, r.instance_type FROM rows r WHERE r.id IN ({marks})", ids
        ):
            facts[row[0]] = row[1:]
    points, best = [], float("inf")
    for hours, cost, row_id, spot, nodes in cheapest:
        gpu, count, provider, instance = facts[row_id]
        points.append(
            {
                "hours": hours,
                "cost": cost,
                "gpu": gpu,
                "gpu_count": count,
                "provider": provider,
                "instance_type": instance,
                "spot": bool(spot),
                "nodes": nodes,
                "pareto": cost < best,
            }
        )
        best = min(best, cost)
    return points


def rows_by_id(conn: sqlite3.Connection, ids: list[int], job_values: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """Listings by id, in the order given, each with its job columns (spot, cost, hours, per_gpu, nodes, layout)."""
    picked = ", ".join(f"r.{c}" for c in _ROW_COLUMNS)
    marks = ", ".join("?" for _ in ids)
    found = {row[0]: row for row in conn.execute(f"SELECT {picked} FROM rows r WHERE r.id IN ({marks})", ids)}
    return _shaped(conn, [found[i] + tuple(values) for i, values in zip(ids, job_values, strict=True)], True)
