"""The comparison page: GET /compare (the live table of catalog offers, optionally for one job) and its JSON,
GET /api/compare (filtered, sorted, server-side paged)."""

from __future__ import annotations

import html
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, Field

from contract.errors import UserError
from contract.jobspec import JobSpec
from contract.languages import LANGUAGES
from web.blocking import run_blocking
from web.compare import early, head
from web.compare.costs import JobTable, build_later, built_table, ensure_job, job_plans, job_wishes, table_name
from web.compare.data import CompareQuery, chart_from, chart_points, filters_sql, rows_by_id, select_page
from web.compare.early import EarlyJob
from web.compare.job import add_job_marks, job_summary, parse_job
from web.compare.store import connect, ensure_store, store_path
from web.deps import AppResources, app_resources
from web.errors import ApiError
from web.serving import public_base_url

PAGE_PATH = "/compare"
PAGE_FILE = Path(__file__).parents[1] / "static" / "compare.html"

router = APIRouter(tags=["compare"])


class CompareFacets(BaseModel):
    """Values the filters can take."""

    gpus: list[str]
    providers: list[str]
    interconnects: list[str]


class CompareResult(BaseModel):
    """One page of the comparison table."""

    offers: int = Field(description="Offers in the catalog (one per instance type, region and zone).")
    total: int = Field(description="Rows matching the filters (offers differing only by zone are one row).")
    page: int
    page_size: int
    pages: int
    sort: str
    order: str
    snapshot_date: str | None
    facets: CompareFacets
    rows: list[dict[str, Any]]
    job: dict[str, Any] | None = Field(
        None,
        description="The job the job columns are for: spec, language, "
        "how many rows it runs on (runs_on), the ranking's "
        "exclusions, budget as given and in USD, and `chart`: "
        "the cheapest row at each duration, Pareto front marked.",
    )


def _catalog(res: AppResources) -> Path:
    """The app's catalog file, or 503 while the server is starting."""
    if res.catalog_path is None:
        raise ApiError(503, "not_ready", "the catalog is still loading; retry in a moment")
    return res.catalog_path


def build_soon(catalog: Path) -> None:
    """Start preparing the catalog's head and store in the background (web.compare.head.warm)."""
    head.warm(catalog)


def compare_page(query: CompareQuery, db_path: Path) -> dict[str, Any]:
    """The comparison result for one query (runs in a worker thread; SQLite pages the derived store). While the
    store of this catalog version is not built, it is built in the background, and the views a person opens first
    are read from the catalog (web.compare.head, the same page); the others wait for the store."""
    if not store_path(db_path).exists():
        build_soon(db_path)
        if head.opens_on(query):
            served = head.catalog_page(db_path, query)
            if served is not None:
                return served
    store = ensure_store(db_path)
    job: dict[str, Any] | None = None
    name: str | None = None
    served = None
    with closing(connect(store)) as conn:
        if query.job and query.job.strip():
            spec, language = parse_job(query.job, query.lang)
            relaxed = spec.model_copy(update={"budget": None, "deadline_hours": None})
            try:
                table = _job_view(conn, store, db_path, query, relaxed)
                if isinstance(table, EarlyJob):
                    served = _early_page(conn, query, table)
                    if served is None:  # a NULL in the sort: the table's order
                        table = ensure_job(store, db_path, relaxed)
            except ValueError as error:
                raise UserError((str(error).strip().splitlines() or ["invalid job"])[0]) from error
            job = job_summary(spec, language, table.runs_on, table.excluded)
            name = table.name if isinstance(table, JobTable) else None
        if served is not None and job is not None:
            total, sort, rows, job["chart"] = served
        else:
            total, sort, rows = select_page(conn, store, query, name)
            if job is not None and name is not None:
                job["chart"] = chart_points(conn, store.name, query, name)
        offers, snapshot = conn.execute("SELECT offers, snapshot_date FROM meta").fetchone()
        facets: dict[str, list[str]] = {"gpus": [], "providers": [], "interconnects": []}
        for kind, value in conn.execute("SELECT kind, value FROM facets ORDER BY kind, value"):
            facets[kind].append(value)
    if job is not None:
        add_job_marks(rows, job)
    return {
        "offers": offers,
        "total": total,
        "page": query.page,
        "page_size": query.page_size,
        "pages": max(1, -(-total // query.page_size)),
        "sort": sort,
        "order": query.order,
        "snapshot_date": snapshot,
        "facets": facets,
        "rows": rows,
        "job": job,
    }


def _job_view(
    conn: sqlite3.Connection, store: Path, catalog: Path, query: CompareQuery, spec: JobSpec
) -> JobTable | EarlyJob:
    """The job's table; for a view a new job opens on (a job sort, no filters) on a large store, while the table
    is not built yet, the job priced in memory instead, its table then built in the background."""
    name = table_name(spec)
    if not early.opens_on(query, filters_sql(query)[0]):
        return ensure_job(store, catalog, spec)
    found = built_table(conn, name)
    if found is None and not early.is_large(conn, store):
        return ensure_job(store, catalog, spec)
    found = found or early.kept(store, name)
    if found is None:
        plans = job_plans(conn, catalog, spec)
        build_later(store, spec, name, plans)
        found = early.early_job(conn, store, name, plans, job_wishes(spec), spec.interruptible_ok)
    return found


def _early_page(
    conn: sqlite3.Connection, query: CompareQuery, job: EarlyJob
) -> tuple[int, str, list[dict[str, Any]], list[dict[str, Any]]] | None:
    """(rows, sort, the page's rows, the chart) of a view early.opens_on, from the job priced in memory; None when
    the sorted values hold a NaN."""
    sort = query.sort or "job_cost"
    start = (query.page - 1) * query.page_size
    picked = early.page_indexes(job, early.SORT_COLUMNS[sort], start, query.page_size, query.order == "desc")
    cheapest = early.cheapest_per_duration(job)
    if picked is None or cheapest is None:
        return None
    values = early.page_values(job, picked)
    rows = rows_by_id(conn, [v[0] for v in values], [v[1:] for v in values])
    return job.runs_on, sort, rows, chart_from(conn, cheapest)


@router.get("/api/compare", response_model=CompareResult, summary="Catalog offers for the comparison table")
async def compare_api(
    query: Annotated[CompareQuery, Query()], res: AppResources = Depends(app_resources)
) -> dict[str, Any]:
    """Every catalog offer (zones merged), filtered, sorted and paged; with `job`, each offer also gets the job's
    fit, per-GPU memory, hours and total cost (sorted by job cost unless `sort` says otherwise)."""
    return await run_blocking(res.executor, compare_page, query, _catalog(res))


def render_compare(api_base: str, lang: str) -> str:
    """The comparison page, its scripts pointed at `api_base`; `lang` empty lets the page choose."""
    template = PAGE_FILE.read_text(encoding="utf-8")
    return template.replace("{{API}}", html.escape(api_base, quote=True)).replace("{{LANG}}", lang)


@router.get(PAGE_PATH, response_class=HTMLResponse, include_in_schema=False)
async def compare_html(request: Request, lang: str | None = None) -> HTMLResponse:
    """The comparison page (the table is filled by /widget/compare/app.js from /api/compare)."""
    chosen = lang if lang in LANGUAGES else ""
    return HTMLResponse(render_compare(public_base_url(request.scope), chosen))  # never the Host header
