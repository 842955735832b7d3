"""The comparison table's data: every catalog offer (zone duplicates collapsed), filtered, sorted and paged in memory.

Offers are read once per catalog file version with tools.catalog.query.query_offers (read-only) and kept as plain rows;
a request then filters/sorts/pages about 4k rows in a few milliseconds. With a job, tools.ranking.rank adds per-offer
fit, per-GPU memory, hours and total job cost (see compare_job)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from contract.languages import Language
from tools.catalog import query_offers
from tools.jobtime import ASSUMED_BILLING, billing_for

SortKey = Literal["gpu", "vram", "count", "interconnect", "provider", "region", "price", "spot_price",
                  "price_per_gpu", "billing", "job_cost", "hours", "per_gpu_gib"]
JOB_SORTS = frozenset({"job_cost", "hours", "per_gpu_gib"})
MAX_PAGE_SIZE = 200


class CompareQuery(BaseModel):
    """Filters, sort and page of the comparison table (all optional)."""

    model_config = ConfigDict(extra="forbid")

    q: str | None = Field(None, max_length=200, description="Words that must all appear in GPU, provider, "
                                                            "instance type or region.")
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
    job: str | None = Field(None, max_length=4000, description="A job in words (it/id/en) or a JobSpec as JSON: "
                                                               "adds fit, memory, hours and job cost per offer.")
    lang: Language | None = Field(None, description="Language of a job given in words.")
    fits_only: bool = Field(True, description="With a job: only offers the job runs on.")


@dataclass(frozen=True, kw_only=True)
class CatalogRows:
    """The catalog as table rows (one per provider, instance type, region and prices; zones merged)."""

    rows: tuple[dict[str, Any], ...]
    offers: int
    snapshot_date: str | None
    gpus: tuple[str, ...]
    providers: tuple[str, ...]
    interconnects: tuple[str, ...]


def _billing(provider: str) -> dict[str, Any]:
    """The provider's billing increment in seconds and whether it is an assumption."""
    rule, _ = billing_for(provider)
    return {"billing_s": rule.granularity_s, "billing_assumed": rule is ASSUMED_BILLING}


def build_rows(db_path: Path) -> CatalogRows:
    """Every offer of the catalog as a row; offers differing only by zone become one row listing the zones."""
    offers = query_offers(db_path, sort="price")
    merged: dict[tuple[Any, ...], dict[str, Any]] = {}
    billing: dict[str, dict[str, Any]] = {}
    for offer in offers:
        key = (offer.provider, offer.instance_type, offer.region, offer.price_per_hour, offer.spot_price_per_hour)
        row = merged.get(key)
        if row is None:
            if offer.provider not in billing:
                billing[offer.provider] = _billing(offer.provider)
            row = merged[key] = {
                "provider": offer.provider, "instance_type": offer.instance_type, "gpu": offer.gpu,
                "gpu_form_factor": offer.gpu_form_factor, "gpu_count": offer.gpu_count,
                "vram_gib_per_gpu": offer.vram_gib_per_gpu, "interconnect": offer.interconnect,
                "region": offer.region, "zones": [], "price_per_hour": offer.price_per_hour,
                "spot_price_per_hour": offer.spot_price_per_hour,
                "price_per_gpu_hour": offer.price_per_gpu_hour, "snapshot_date": offer.snapshot_date,
                **billing[offer.provider]}
            row["_text"] = " ".join(str(v) for v in (offer.gpu, offer.provider, offer.instance_type, offer.region)
                                    if v).lower()
        if offer.zone and offer.zone not in row["zones"]:
            row["zones"].append(offer.zone)
            row["_text"] += " " + offer.zone.lower()
    rows = tuple(merged.values())
    dates = sorted({r["snapshot_date"] for r in rows if r["snapshot_date"]})
    return CatalogRows(rows=rows, offers=len(offers), snapshot_date=dates[-1] if dates else None,
                       gpus=tuple(sorted({r["gpu"] for r in rows})),
                       providers=tuple(sorted({r["provider"] for r in rows})),
                       interconnects=tuple(sorted({r["interconnect"] for r in rows})))


@dataclass
class RowsCache:
    """CatalogRows per catalog file, rebuilt when the file changes (thread-safe)."""

    _lock: threading.Lock = field(default_factory=threading.Lock)
    _key: tuple[str, float] | None = None
    _value: CatalogRows | None = None

    def get(self, db_path: Path) -> CatalogRows:
        """The rows of `db_path`, read again only after the file was replaced."""
        key = (str(db_path), db_path.stat().st_mtime)
        with self._lock:
            if self._key != key or self._value is None:
                self._value, self._key = build_rows(db_path), key
            return self._value


def _matches(row: dict[str, Any], query: CompareQuery, words: list[str]) -> bool:
    """Whether a catalog row passes every filter of the query."""
    if query.gpu and row["gpu"].lower() != query.gpu.strip().lower():
        return False
    if query.provider and row["provider"] != query.provider.strip().lower():
        return False
    if query.region:
        wanted = query.region.strip().lower()
        if wanted not in (row["region"] or "").lower() and not any(wanted in z.lower() for z in row["zones"]):
            return False
    if query.interconnect and row["interconnect"] != query.interconnect.strip().lower():
        return False
    if query.gpu_count is not None and row["gpu_count"] != query.gpu_count:
        return False
    if query.min_vram is not None and (row["vram_gib_per_gpu"] or 0) < query.min_vram:
        return False
    if query.max_price is not None and (row["price_per_hour"] is None or row["price_per_hour"] > query.max_price):
        return False
    if query.spot and row["spot_price_per_hour"] is None:
        return False
    return all(word in row["_text"] for word in words)


_SORT_VALUES: dict[str, Callable[[dict[str, Any]], Any]] = {
    "gpu": lambda r: r["gpu"].lower(),
    "vram": lambda r: r["vram_gib_per_gpu"],
    "count": lambda r: r["gpu_count"],
    "interconnect": lambda r: r["interconnect"],
    "provider": lambda r: r["provider"],
    "region": lambda r: (r["region"] or "").lower() or None,
    "price": lambda r: r["price_per_hour"],
    "spot_price": lambda r: r["spot_price_per_hour"],
    "price_per_gpu": lambda r: r["price_per_gpu_hour"],
    "billing": lambda r: r["billing_s"],
    "job_cost": lambda r: (r.get("job") or {}).get("est_cost"),
    "hours": lambda r: (r.get("job") or {}).get("est_hours"),
    "per_gpu_gib": lambda r: (r.get("job") or {}).get("per_gpu_gib"),
}


def sort_rows(rows: list[dict[str, Any]], sort: str, order: str) -> list[dict[str, Any]]:
    """Rows sorted by one column (missing values last in both orders), ties by on-demand price, then name."""
    value = _SORT_VALUES[sort]
    tie = sorted(rows, key=lambda r: (r["price_per_hour"] is None, r["price_per_hour"] or 0, r["provider"],
                                      r["instance_type"], r["region"] or ""))
    present = [r for r in tie if value(r) is not None]
    missing = [r for r in tie if value(r) is None]
    present.sort(key=value, reverse=order == "desc")
    return present + missing


def public_row(row: dict[str, Any]) -> dict[str, Any]:
    """A row as the API returns it (internal search text dropped)."""
    return {k: v for k, v in row.items() if not k.startswith("_")}


def select_rows(rows: tuple[dict[str, Any], ...] | list[dict[str, Any]], query: CompareQuery
                ) -> tuple[int, list[dict[str, Any]]]:
    """(number of matching rows, the requested page of them), filtered and sorted as the query says."""
    words = [w for w in (query.q or "").lower().split() if w]
    matching = [r for r in rows if _matches(r, query, words)]
    sort = query.sort or ("job_cost" if any("job" in r for r in matching) else "price")
    ordered = sort_rows(matching, sort, query.order)
    start = (query.page - 1) * query.page_size
    return len(ordered), [public_row(r) for r in ordered[start:start + query.page_size]]
