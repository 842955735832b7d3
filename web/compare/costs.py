"""A job on the comparison table, costed per hardware shape and priced per listing in SQL.

Everything but the price in an offer's job cost depends on its shape (GPU, count, memory, links, fabric), provider
and market-price flag: tools.ranking's own functions (tools.ranking.plan_shape, tools.ranking.costing.ShapeCosts) give,
for each of the catalog's few hundred shapes, the node count, topology, hours and billed hours on demand and the
spot run model. SQLite then prices every listing with the same operations in the same order as
tools.ranking.costing.cost_offer (spot when allowed, offered, likely to finish and cheaper), into one job table
ordered and paged like the listings, with no cap on the rows reachable."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import sqlite3
import threading
import time
from collections import Counter
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contract.jobspec import JobSpec
from tools.catalog import OFFER_FIELDS, OfferGroup, offer_from_row, shape_of, wish_filters
from tools.jobtime import DEFAULT_MEMORY_MARGIN
from tools.ranking import MULTI_NODE_MIN_GPUS, CostingJob, ShapeCosts, fewest_nodes, nodes_for, plan_shape
from tools.spot import DEFAULT_DEADLINE_CONFIDENCE, HOUR
from web.compare.store import BUSY_TIMEOUT_S, OD_PRICE, SPOT_PRICE, connect

MAX_JOB_TABLES = 16
_lock = threading.Lock()
"""Held while this process writes a job's table or a sort index (one writer at a time; other workers wait on SQLite)."""
_registry = threading.Lock()
"""Guards `_building` only: registering a background build never waits for another job's table to be written."""


@dataclass(frozen=True, kw_only=True)
class JobTable:
    """One job's priced listings in the store: the table's name, the rows it runs on, exclusions per reason."""

    name: str
    runs_on: int
    excluded: dict[str, int]


def _shape_plan(offer: Any, spec: JobSpec, memo: ShapeCosts) -> tuple[dict[str, Any] | None, str | None]:
    """The plan of one shape (as tools.ranking.plans.plans_for_group without a deadline): figures or an exclusion."""
    group = OfferGroup(offer=offer, count=1, regions=())
    nodes = nodes_for(offer, spec.num_gpus)
    if nodes is None:
        return None, "gpu_count_mismatch"
    single = shape_of(offer, 1)
    costed, why = plan_shape(group, single, nodes, memo)
    if costed is None and why == "does_not_fit" and spec.num_gpus is None and offer.gpu_count >= MULTI_NODE_MIN_GPUS:
        tried: dict[int, tuple[Any, str | None]] = {}

        def holds(count: int) -> bool:
            """Whether `count` nodes hold the job in memory."""
            tried[count] = plan_shape(group, single, count, memo)
            return tried[count][1] != "does_not_fit"

        count = fewest_nodes(holds)
        if count is not None:
            nodes, (costed, why) = count, tried[count]
    if why in ("needs_nvlink_node", "does_not_fit", "no_speed_data"):
        return None, why
    entry = memo.entry(shape_of(offer, nodes))
    topology, job_time = entry.evaluation.topology, entry.evaluation.time
    run = memo.on_demand_run(entry, nodes, offer.provider, job_time)
    figures = {
        "nodes": nodes,
        "od_billed": run.billed_hours,
        "od_hours": run.hours,
        "per_gpu": topology.per_gpu_gib,
        "layout": topology.layout,
        "micro_batch": topology.micro_batch_size,
        "spot_model": 0,
        "spot_billed_s": None,
        "spot_od_billed_s": None,
        "spot_hours": None,
    }
    if spec.interruptible_ok is not False:
        spot = memo.spot_run(entry, nodes, offer.provider, job_time)
        model = spot.model
        if model is not None:
            likely = model.p_spot is None or model.p_spot >= DEFAULT_DEADLINE_CONFIDENCE
            figures.update(
                spot_model=1,
                spot_billed_s=model.spot_billed_s,
                spot_od_billed_s=model.od_billed_s,
                spot_hours=model.completion.mean_s / HOUR,
                spot_decides=int(math.isfinite(model.completion.mean_s) and likely),
            )
    return figures, None


def _memo(spec: JobSpec) -> ShapeCosts:
    """The ranking's per-job costing memo (as tools.ranking.rank_offers builds it, without budget and rate)."""
    return ShapeCosts(job=CostingJob.of(spec, margin=DEFAULT_MEMORY_MARGIN, budget=None, rate=None))


PLAN_COLUMNS = (
    "shape_id",
    "nodes",
    "od_billed",
    "od_hours",
    "per_gpu",
    "layout",
    "spot_model",
    "spot_decides",
    "spot_billed_s",
    "spot_od_billed_s",
    "spot_hours",
)
# tools.ranking.costing.cost_offer and tools.spot.risk.price_outcome, operation for operation, in stages that each
# compute their columns once per listing (`LIMIT -1 OFFSET 0` keeps SQLite from inlining a stage's expressions into
# every later use: flattened, the spot verdict was evaluated three times per row, each with its prices again)
_PRICES = (
    f"SELECT r.id, {OD_PRICE} AS od, {SPOT_PRICE} AS sp, p.* FROM rows r JOIN temp.plan p ON p.shape_id = r.shape_id "
    "WHERE {where} LIMIT -1 OFFSET 0"
)
_SPOT_TERMS = (
    "SELECT *, (spot_model = 1 AND sp IS NOT NULL AND sp != 0) AS spot_ok, ((sp * nodes) * spot_billed_s / 3600.0) "
    "AS spot_cost, (CASE WHEN od IS NOT NULL AND od != 0 THEN (od * nodes) * spot_od_billed_s / 3600.0 END) "
    "AS od_model FROM ({prices}) LIMIT -1 OFFSET 0"
)
_PRICED = (
    "SELECT id, spot, CASE WHEN spot THEN spot_cost ELSE od_billed * od * nodes END AS cost, CASE WHEN spot THEN "
    "spot_hours ELSE od_hours END AS hours, per_gpu, nodes, layout FROM (SELECT *, {use_spot} AS spot FROM "
    "({terms}) LIMIT -1 OFFSET 0) WHERE spot OR od IS NOT NULL"
)
JOB_COLUMNS = ("id INTEGER PRIMARY KEY", "spot", "cost", "hours", "per_gpu", "nodes", "layout")
"""A job table's columns: the listing's id is the table's rowid (no separate id index)."""
SORT_COLUMNS = frozenset({"hours", "per_gpu"})
"""Job columns whose sort index is created on first use of that sort (the job cost's comes with the table)."""


def _use_spot(interruptible_ok: bool | None) -> str:
    """SQL for cost_offer's use_spot over _SPOT_TERMS' columns."""
    verdict = "(spot_ok AND spot_decides = 1 AND (od_model IS NULL OR spot_cost < od_model))"
    if interruptible_ok:
        return f"({verdict} OR (spot_ok AND od IS NULL))"
    return verdict


def priced_sql(where: list[str], interruptible_ok: bool | None) -> str:
    """The SELECT that prices every listing the wishes keep with temp.plan's figures (JOB_COLUMNS' order)."""
    prices = _PRICES.format(where=" AND ".join(where) or "1")
    return _PRICED.format(use_spot=_use_spot(interruptible_ok), terms=_SPOT_TERMS.format(prices=prices))


def table_name(spec: JobSpec) -> str:
    """The job table's name: one per distinct job spec (budget and deadline do not change the figures)."""
    text = spec.model_dump_json(exclude={"budget", "deadline_hours", "language"})
    return "job_" + hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class JobPlans:
    """A job's figures per hardware shape (temp.plan's rows, PLAN_COLUMNS) and its listings excluded per reason."""

    rows: list[tuple[Any, ...]]
    excluded: dict[str, int]


def ensure_job(store: Path, catalog: Path, spec: JobSpec) -> JobTable:
    """The job's table in the store (computed on first use, shared by later pages and other workers)."""
    name = table_name(spec)
    with closing(connect(store)) as conn:
        if not _exists(conn, name):
            with _lock:
                if not _exists(conn, name):
                    _write_job(conn, spec, name, job_plans(conn, catalog, spec))
        return _table(conn, name)


def built_table(conn: sqlite3.Connection, name: str) -> JobTable | None:
    """The job's table when it is in the store."""
    return _table(conn, name) if _exists(conn, name) else None


def build_later(store: Path, spec: JobSpec, name: str, plans: JobPlans) -> None:
    """Write the job's table in a background thread (one per job and process), so that a new job's first pages
    need not wait for it (web.compare.early), nor for another job's table being written; ensure_job waits for it."""
    with _registry:
        if name not in _building:
            _building[name] = threading.Thread(
                target=_build_later, args=(store, spec, name, plans), name=f"compare-{name}", daemon=True
            )
            _building[name].start()


_building: dict[str, threading.Thread] = {}


def _build_later(store: Path, spec: JobSpec, name: str, plans: JobPlans) -> None:
    """Write the job's table (a background thread); a failure is logged, and the next page builds it again."""
    try:
        with closing(connect(store)) as conn, _lock:
            if not _exists(conn, name):
                _write_job(conn, spec, name, plans)
    except Exception as error:
        logging.getLogger("gpu_advisor.web").warning("job table %s not built: %s", name, error)
    finally:
        with _registry:
            _building.pop(name, None)


def wait_for_builds() -> None:
    """Wait until the job tables being built in the background are written (tests, shutdown)."""
    while True:
        with _registry:
            threads = list(_building.values())
        if not threads:
            return
        for thread in threads:
            thread.join()


def _exists(conn: sqlite3.Connection, name: str) -> bool:
    """Whether the job's table is in the store."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None


def _table(conn: sqlite3.Connection, name: str) -> JobTable:
    """A built job table: marked used (best effort: never waits for another job's build) and its counts read."""
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        conn.execute("UPDATE jobs SET used = ? WHERE name = ?", (time.time(), name))
    except sqlite3.OperationalError:  # another job's table is being written: the mark waits for the next page
        pass
    finally:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_S * 1000}")
    runs_on, excluded = conn.execute(f"SELECT runs_on, excluded FROM {name}_meta").fetchone()
    return JobTable(name=name, runs_on=runs_on, excluded=json.loads(excluded))


def job_plans(conn: sqlite3.Connection, catalog: Path, spec: JobSpec) -> JobPlans:
    """Cost every shape of the store for the job: temp.plan's rows and the listings excluded per reason."""
    memo = _memo(spec)
    shape_rows = conn.execute("SELECT id, rep_id, rows FROM shapes").fetchall()
    with closing(sqlite3.connect(f"file:{catalog.resolve().as_posix()}?mode=ro", uri=True)) as cat:
        reps = {
            row[0]: offer_from_row(row[1:])
            for row in cat.execute(
                f"SELECT id, {', '.join(OFFER_FIELDS)} FROM offers WHERE id IN (SELECT value FROM json_each(?))",
                (json.dumps([r[1] for r in shape_rows]),),
            )
        }
    memo.prefill(  # every shape's first layout search at once, geometry by geometry
        shape_of(offer, nodes) for offer in reps.values() if (nodes := nodes_for(offer, spec.num_gpus)) is not None
    )
    plans: list[tuple[Any, ...]] = []
    excluded: Counter[str] = Counter()
    for shape_id, rep_id, rows in shape_rows:
        figures, why = _shape_plan(reps[rep_id], spec, memo)
        if figures is None:
            excluded[why or "does_not_fit"] += rows
            continue
        plans.append(((shape_id, *(figures.get(c) for c in PLAN_COLUMNS[1:])), figures["micro_batch"]))
    stated = spec.micro_batch_size
    if stated:  # tools.ranking.rank._at_stated_micro_batch: the plans that run the stated micro-batch, when any does
        plans = [p for p in plans if (p[1] or stated) >= stated] or plans
    return JobPlans(rows=[plan for plan, _ in plans], excluded=dict(excluded))


def _write_job(conn: sqlite3.Connection, spec: JobSpec, name: str, plans: JobPlans) -> None:
    """Price every listing with the plans, write the job table and its indexes, drop the oldest job tables."""
    where, params = job_wishes(spec)
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not _exists(conn, name):
            conn.execute(f"CREATE TEMP TABLE plan (shape_id INTEGER PRIMARY KEY, {', '.join(PLAN_COLUMNS[1:])})")
            conn.executemany(f"INSERT INTO plan VALUES ({', '.join('?' for _ in PLAN_COLUMNS)})", plans.rows)
            conn.execute(f"CREATE TABLE {name} ({', '.join(JOB_COLUMNS)})")
            conn.execute(f"INSERT INTO {name} {priced_sql(where, spec.interruptible_ok)}", params)
            conn.execute(f"CREATE INDEX {name}_cost ON {name} (cost, id)")
            conn.execute(f"CREATE INDEX {name}_chart ON {name} (hours, cost)")  # cheapest per duration
            runs_on = conn.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
            conn.execute(
                f"CREATE TABLE {name}_meta AS SELECT ? AS runs_on, ? AS excluded",
                (runs_on, json.dumps(plans.excluded)),
            )
            conn.execute("INSERT OR REPLACE INTO jobs VALUES (?, ?)", (name, time.time()))
            conn.execute("DROP TABLE temp.plan")
            for (old,) in conn.execute(
                "SELECT name FROM jobs ORDER BY used DESC LIMIT -1 OFFSET ?", (MAX_JOB_TABLES,)
            ).fetchall():
                conn.execute(f"DROP TABLE IF EXISTS {old}")
                conn.execute(f"DROP TABLE IF EXISTS {old}_meta")
                conn.execute("DELETE FROM jobs WHERE name = ?", (old,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def job_sort_index(conn: sqlite3.Connection, name: str, column: str) -> None:
    """Create a job table's index for sorting by `column` on first use (about a second on a million listings)."""
    if column in SORT_COLUMNS:
        with _lock:
            conn.execute(f"CREATE INDEX IF NOT EXISTS {name}_{column} ON {name} ({column}, id)")


def job_wishes(spec: JobSpec) -> tuple[list[str], list[Any]]:
    """The job's GPU, provider and region wishes as SQL over the listings (regions through their places)."""
    where, params = wish_filters(spec.gpu, None, None)
    where = [w.replace("gpu_lc", "r.gpu_lc").replace("gpu_form_factor", "r.gpu_form_factor") for w in where]
    more, more_params = wish_filters(None, tuple(spec.providers or ()) or None, None)
    where += [w.replace("provider_lc", "r.provider_lc").replace("upstream_lc", "r.upstream_lc") for w in more]
    params += more_params
    if spec.regions:
        clause, values = wish_filters(None, None, tuple(spec.regions))
        where.append(f"r.id IN (SELECT row_id FROM places WHERE {' AND '.join(clause)})")
        params += values
    return where, params
