"""A new job's first pages on a large catalog, priced in memory while its table is built.

A job's table (web.compare.costs) prices and indexes every listing in SQLite: seconds on a million listings. The
pages a new job opens on (a job sort, no filters) need only each listing's shape and prices, which the store keeps
as arrays (web.compare.store.PRICE_ARRAYS). numpy prices them with the job's plans using the same operations in the same
order as the table's SQL (web.compare.costs.priced_sql), so the rows, their order, the count and the chart are the
table's. Everything else waits for the table."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tools.lru import Lru
from web.compare.costs import PLAN_COLUMNS, JobPlans
from web.compare.store import PRICE_ARRAYS

EARLY_FROM = 200_000
"""Stores with at least this many listings open a new job's pages early (smaller ones build its table in under a
second or so, and wait for it)."""
SORT_COLUMNS = {"job_cost": "cost", "hours": "hours", "per_gpu_gib": "per_gpu"}
"""The job sorts a view opens early in, and the job column each orders by."""
_KEPT_JOBS = 2
_BLOCK = 1 << 15
_KEPT_STORES = 2
"""Stores whose price arrays are kept (the one served and, while it is replaced, the next)."""
_listings: Lru[Path, Listings] = Lru(_KEPT_STORES)
_jobs: Lru[tuple[Path, str], EarlyJob] = Lru(_KEPT_JOBS)


@dataclass(frozen=True)
class Listings:
    """Every listing's id, shape and effective prices (NaN: none) by position, in id order."""

    id: np.ndarray
    shape: np.ndarray
    od: np.ndarray
    sp: np.ndarray


@dataclass(frozen=True)
class Plans:
    """A job's plan figures as arrays indexed by shape id (`planned` says which shapes have a plan)."""

    planned: np.ndarray
    columns: dict[str, np.ndarray]
    layouts: list[Any]


@dataclass
class EarlyJob:
    """The listings a job runs on (positions, ascending, and the ids of all listings by position) with their shape,
    cost and spot choice, and its plans."""

    runs_on: int
    ids: np.ndarray
    excluded: dict[str, int]
    positions: np.ndarray
    shapes: np.ndarray
    cost: np.ndarray
    spot: np.ndarray
    plans: Plans
    orders: dict[str, np.ndarray] = field(default_factory=dict)
    chart: list[tuple[float, float, int, bool, int]] | None = None

    def values(self, column: str) -> np.ndarray:
        """A job column (cost, hours, per_gpu, nodes) of every listing the job runs on."""
        if column == "cost":
            return self.cost
        figures = self.plans.columns
        if column == "hours":
            return np.where(self.spot, figures["spot_hours"][self.shapes], figures["od_hours"][self.shapes])
        return figures[column][self.shapes]


def listings(conn: sqlite3.Connection, store: Path) -> Listings:
    """The store's price arrays (read once per store and process)."""

    def read() -> Listings:
        """The arrays from the store."""
        blobs = dict(conn.execute("SELECT name, data FROM price_arrays"))
        return Listings(**{name: np.frombuffer(blobs[name], dtype=kind) for name, kind in PRICE_ARRAYS.items()})

    return _listings.get_or_make(store, read)


def is_large(conn: sqlite3.Connection, store: Path) -> bool:
    """Whether a new job's pages on this store open early (EARLY_FROM listings or more)."""
    return len(listings(conn, store).shape) >= EARLY_FROM


def opens_on(query: Any, filters: list[str]) -> bool:
    """Whether a comparison query is a view opened early: the rows the job runs on, no filter, a job sort."""
    return bool(query.fits_only) and not filters and (query.sort or "job_cost") in SORT_COLUMNS


def kept(store: Path, name: str) -> EarlyJob | None:
    """The job priced in memory, when it still is."""
    return _jobs.get((store, name))


def _plan_arrays(plans: JobPlans, shapes: int) -> Plans:
    """The plans' figures by shape id (NaN where SQL holds NULL)."""
    planned = np.zeros(shapes, dtype=bool)
    columns = {name: np.full(shapes, np.nan) for name in PLAN_COLUMNS[1:] if name != "layout"}
    layouts: list[Any] = [None] * shapes
    for row in plans.rows:
        shape = row[0]
        planned[shape] = True
        for name, value in zip(PLAN_COLUMNS[1:], row[1:], strict=True):
            if name == "layout":
                layouts[shape] = value
            elif value is not None:
                columns[name][shape] = value
    return Plans(planned=planned, columns=columns, layouts=layouts)


def price_job(found: Listings, plans: JobPlans, kept: np.ndarray | None, interruptible_ok: bool | None) -> EarlyJob:
    """Every listing priced as web.compare.costs.priced_sql prices it (its stages, operation for operation): the
    listings `kept` (the job's wishes; None: all) whose shape has a plan and that run on spot or on demand. Priced
    in blocks of _BLOCK listings, so that the temporaries stay small and are reused."""
    shapes = max(max((row[0] for row in plans.rows), default=0), int(found.shape.max(initial=0))) + 1
    table = _plan_arrays(plans, shapes)
    figures = table.columns
    parts = []
    for begin in range(0, len(found.shape), _BLOCK):
        block = slice(begin, begin + _BLOCK)
        shape = found.shape[block]
        where = table.planned[shape] if kept is None else table.planned[shape] & kept[block]
        local = np.flatnonzero(where)
        shape = shape[local]
        od, sp, nodes = found.od[block][local], found.sp[block][local], figures["nodes"][shape]
        with np.errstate(invalid="ignore"):
            spot_ok = (figures["spot_model"][shape] == 1) & ~np.isnan(sp) & (sp != 0)
            spot_cost = (sp * nodes) * figures["spot_billed_s"][shape] / 3600.0
            od_model = (od * nodes) * figures["spot_od_billed_s"][shape] / 3600.0
            od_model[od == 0] = np.nan  # SQL: no on-demand model without an on-demand price
            spot = spot_ok & (figures["spot_decides"][shape] == 1) & (np.isnan(od_model) | (spot_cost < od_model))
            if interruptible_ok:
                spot |= spot_ok & np.isnan(od)
            runs = spot | ~np.isnan(od)
            cost = np.where(spot, spot_cost, figures["od_billed"][shape] * od * nodes)
        parts.append((local[runs] + begin, shape[runs], cost[runs], spot[runs]))
    kinds = (np.int64, np.int32, np.float64, np.bool_)
    positions, shape, cost, spot = (
        np.concatenate([part[n] for part in parts]).astype(kind, copy=False) if parts else np.empty(0, dtype=kind)
        for n, kind in enumerate(kinds)
    )
    return EarlyJob(
        runs_on=len(positions),
        ids=found.id,
        excluded=plans.excluded,
        positions=positions,
        shapes=shape,
        cost=cost,
        spot=spot,
        plans=table,
    )


def early_job(
    conn: sqlite3.Connection,
    store: Path,
    name: str,
    plans: JobPlans,
    wishes: tuple[list[str], list[Any]],
    interruptible_ok: bool | None,
) -> EarlyJob:
    """The job priced in memory (kept for the next pages while its table is being built)."""
    key = (store, name)
    early = _jobs.get(key)
    if early is not None:
        return early
    where, params = wishes
    kept = None
    found = listings(conn, store)
    if where:
        ids = np.fromiter(
            (i for (i,) in conn.execute(f"SELECT r.id FROM rows r WHERE {' AND '.join(where)}", params)),
            dtype=np.int64,
        )
        kept = np.zeros(len(found.shape), dtype=bool)
        kept[np.searchsorted(found.id, ids)] = True
    return _jobs.put(key, price_job(found, plans, kept, interruptible_ok))


def page_indexes(job: EarlyJob, column: str, start: int, size: int, descending: bool) -> np.ndarray | None:
    """Indexes into the job's listings of one page in (column, id) order, ascending or both descending, as the
    table's index walks them; None when a value is NaN (NULL in SQL, which sorts differently: the table serves
    that view). Pages near either end need only a partition; the others sort all once."""
    values = job.values(column)
    if np.isnan(values).any():
        return None
    count = len(values)
    wanted = min(count, start + size)
    low, high = (count - wanted, count - start) if descending else (start, wanted)  # the ascending range
    if high <= low:
        return np.empty(0, dtype=np.int64)
    if high * 8 <= count:
        picked = _first(values, high)[low:high]
    elif (count - low) * 8 <= count:
        picked = _last(values, count - low)[: high - low]
    else:
        if column not in job.orders:
            job.orders[column] = np.argsort(values, kind="stable")  # positions ascend: ties stay in id order
        picked = job.orders[column][low:high]
    return picked[::-1] if descending else picked


def _first(values: np.ndarray, k: int) -> np.ndarray:
    """Indexes of the first k of the values' ascending (value, index) order (0 < k <= len)."""
    edge = np.partition(values, k - 1)[k - 1]
    near = np.flatnonzero(values <= edge)  # every value before the edge and all its ties, in index order
    return near[np.argsort(values[near], kind="stable")][:k]


def _last(values: np.ndarray, k: int) -> np.ndarray:
    """Indexes of the last k of the values' ascending (value, index) order (0 < k <= len)."""
    edge = np.partition(values, len(values) - k)[len(values) - k]
    near = np.flatnonzero(values >= edge)
    return near[np.argsort(values[near], kind="stable")][len(near) - k :]


def page_values(job: EarlyJob, picked: np.ndarray) -> list[tuple[Any, ...]]:
    """(id, spot, cost, hours, per_gpu, nodes, layout) of the listings picked, in their order."""
    hours, per_gpu, nodes = (job.values(name)[picked] for name in ("hours", "per_gpu", "nodes"))
    return [
        (
            int(job.ids[job.positions[i]]),
            int(job.spot[i]),
            float(job.cost[i]),
            float(hours[n]),
            float(per_gpu[n]),
            int(nodes[n]),
            job.plans.layouts[int(job.shapes[i])],
        )
        for n, i in enumerate(picked)
    ]


def cheapest_per_duration(job: EarlyJob) -> list[tuple[float, float, int, bool, int]] | None:
    """(hours, cost, id, spot, nodes) of the cheapest listing at each duration (the lowest id among equal costs),
    in hours order, as chart_points reads them from the table; None when a value is NaN. A duration is a shape's
    on demand or on spot, so the cheapest of each (shape, spot) are found first."""
    if job.chart is None:
        hours = job.values("hours")
        if np.isnan(hours).any() or np.isnan(job.cost).any():
            return None
        group = job.shapes.astype(np.int64) * 2 + job.spot
        least = np.full(len(job.plans.planned) * 2, np.inf)
        np.minimum.at(least, group, job.cost)
        near = np.flatnonzero(job.cost == least[group])
        near = near[np.lexsort((job.positions[near], job.cost[near], hours[near]))]
        first = near[np.flatnonzero(np.r_[True, hours[near][1:] != hours[near][:-1]])]
        nodes = job.values("nodes")[first]
        job.chart = [
            (float(hours[i]), float(job.cost[i]), int(job.ids[job.positions[i]]), bool(job.spot[i]), int(nodes[n]))
            for n, i in enumerate(first)
        ]
    return job.chart
