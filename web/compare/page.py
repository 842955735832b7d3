"""The comparison page: GET /compare (the live table of catalog offers, optionally for one job) and its JSON,
GET /api/compare (filtered, sorted, server-side paged)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, Field

from contract.languages import LANGUAGES
from web.blocking import run_blocking
from web.compare.data import CompareQuery, RowsCache, select_rows
from web.compare.job import JobCache, with_job
from web.deps import AppResources, resources
from web.errors import ApiError
from web.serving import public_base_url

PAGE_PATH = "/compare"
PAGE_FILE = Path(__file__).parents[1] / "static" / "compare.html"

router = APIRouter(tags=["compare"])
_rows_cache = RowsCache()
_job_cache = JobCache()


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
    job: dict[str, Any] | None = Field(None, description="The job the job columns are for: spec, language, "
                                                         "how many rows it runs on (runs_on), the ranking's "
                                                         "exclusions, budget in USD.")


def _catalog(res: AppResources) -> Path:
    """The app's catalog file, or 503 while the server is starting."""
    if res.catalog_path is None:
        raise ApiError(503, "not_ready", "the catalog is still loading; retry in a moment")
    return res.catalog_path


def compare_page(query: CompareQuery, db_path: Path) -> dict[str, Any]:
    """The comparison result for one query (runs in a worker thread: the first job ranking takes ~0.3 s)."""
    catalog = _rows_cache.get(db_path)
    job = None
    rows: Any = catalog.rows
    if query.job and query.job.strip():
        columns = _job_cache.get(query.job, query.lang, db_path)
        rows, runs_on = with_job(catalog.rows, columns, query.fits_only)
        job = {**columns.summary, "runs_on": runs_on}
    total, page_rows = select_rows(rows, query)
    sort = query.sort or ("job_cost" if job else "price")
    return {"offers": catalog.offers, "total": total, "page": query.page, "page_size": query.page_size,
            "pages": max(1, -(-total // query.page_size)), "sort": sort, "order": query.order,
            "snapshot_date": catalog.snapshot_date,
            "facets": {"gpus": list(catalog.gpus), "providers": list(catalog.providers),
                       "interconnects": list(catalog.interconnects)},
            "rows": page_rows, "job": job}


@router.get("/api/compare", response_model=CompareResult, summary="Catalog offers for the comparison table")
async def compare_api(query: Annotated[CompareQuery, Query()], res: AppResources = Depends(resources)
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
