"""A job on the comparison table: parse it (words or JobSpec JSON), rank every offer for it, join onto the rows.

The ranking is run without the budget and deadline so that every offer the job runs on gets its hours and cost;
"within budget" and "within deadline" are then marked per row. Results are cached per job and catalog version."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from contract.errors import UserError
from contract.jobspec import JobSpec

JOB_CACHE_SIZE = 32


@dataclass(frozen=True, kw_only=True)
class JobColumns:
    """What a job adds to the table: per-offer figures keyed by (provider, instance type, region), and a summary."""

    by_offer: dict[tuple[Any, ...], dict[str, Any]]
    """(provider, instance type, region, on-demand $/h, spot $/h) -> the job's figures on that offer."""
    summary: dict[str, Any]


def parse_job(text: str, lang: str | None) -> tuple[JobSpec, str]:
    """The job as a JobSpec and its language: JSON is validated as a JobSpec, words go through the offline parser."""
    text = text.strip()
    if text.startswith("{"):
        try:
            values = json.loads(text)
            given = {k: v for k, v in values.items() if v is not None}
            given.setdefault("language", lang or "en")
            spec = JobSpec.model_validate(given)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "job"
            raise UserError(f"job is not a valid job description: {where}: {first.get('msg', 'invalid')}") from error
        except (ValueError, AttributeError) as error:
            raise UserError(f"job is not a valid job description: {_first_line(error)}") from error
        language = lang or spec.language or "en"
        return spec, language
    from agent.parsing import parse_message

    parsed = parse_message(text, lang=lang, use_llm=False)
    return parsed.spec, parsed.language.language


def _first_line(error: Exception) -> str:
    """The first line of an error message."""
    return (str(error).strip().splitlines() or ["invalid"])[0]


def _budget_usd(spec: JobSpec) -> float | None:
    """The job's budget in USD (converted with the shipped exchange rates), or None."""
    if spec.budget is None:
        return None
    if spec.budget.currency == "USD":
        return spec.budget.amount
    from tools.fx import to_usd

    return to_usd(spec.budget.amount, spec.budget.currency)[0]


def job_columns(text: str, lang: str | None, db_path: Path) -> JobColumns:
    """Rank every catalog offer for the job; figures per offer and a summary of the job."""
    from tools.ranking import rank_offers

    spec, language = parse_job(text, lang)
    relaxed = spec.model_copy(update={"budget": None, "deadline_hours": None})
    try:
        ranking = rank_offers(relaxed, db_path=db_path, limit=100_000)
    except ValueError as error:
        raise UserError(_first_line(error)) from error
    budget = _budget_usd(spec)
    by_offer: dict[tuple[Any, ...], dict[str, Any]] = {}
    for item in ranking.offers:
        figures = {"fits": item.fits, "per_gpu_gib": item.per_gpu_gib, "est_hours": item.est_hours,
                   "est_cost": item.est_cost, "spot": item.spot, "nodes": item.nodes, "total_gpus": item.total_gpus,
                   "layout": item.layout,
                   "meets_budget": None if budget is None else item.est_cost <= budget,
                   "meets_deadline": None if spec.deadline_hours is None else item.est_hours <= spec.deadline_hours}
        for region in item.regions or [item.region]:
            key = (item.provider, item.instance_type, region, item.on_demand_price_per_hour,
                   item.spot_price_per_hour)
            by_offer.setdefault(key, figures)
    summary = {"language": language, "spec": spec.model_dump(exclude_none=True), "model_id": ranking.model_id,
               "method": ranking.method, "excluded": ranking.excluded,
               "budget_usd": budget, "deadline_hours": spec.deadline_hours}
    return JobColumns(by_offer=by_offer, summary=summary)


class JobCache:
    """The last few jobs' columns, per catalog file version (thread-safe)."""

    def __init__(self, size: int = JOB_CACHE_SIZE) -> None:
        """An empty cache holding up to `size` jobs."""
        self._size = size
        self._items: OrderedDict[tuple[Any, ...], JobColumns] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str, lang: str | None, db_path: Path) -> JobColumns:
        """The job's columns, computed on first use."""
        key = (" ".join(text.split()), lang, str(db_path), db_path.stat().st_mtime)
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        columns = job_columns(text, lang, db_path)
        with self._lock:
            self._items[key] = columns
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return columns


def with_job(rows: tuple[dict[str, Any], ...], columns: JobColumns, fits_only: bool
             ) -> tuple[list[dict[str, Any]], int]:
    """(rows with a `job` entry: figures, or {"fits": False} where the job does not run; only fitting ones if asked,
    how many rows the job runs on)."""
    out: list[dict[str, Any]] = []
    runs = 0
    for row in rows:
        figures = columns.by_offer.get((row["provider"], row["instance_type"], row["region"],
                                        row["price_per_hour"], row["spot_price_per_hour"]))
        runs += figures is not None
        if figures is None and fits_only:
            continue
        out.append({**row, "job": figures or {"fits": False}})
    return out, runs
