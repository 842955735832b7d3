"""A job on the comparison table: parse it (words or JobSpec JSON), summarise it, mark budget and deadline per row.

Every listing the job runs on is costed without the budget and deadline (web.compare.costs), so each gets its hours
and cost; "within budget" and "within deadline" are then marked per row, the budget in the user's currency."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from contract.errors import UserError
from contract.jobspec import JobSpec


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


def budget_of(spec: JobSpec) -> dict[str, Any] | None:
    """The job's budget as the user gave it and in USD (converted with the shipped exchange rates), or None."""
    if spec.budget is None:
        return None
    amount, currency = spec.budget.amount, spec.budget.currency
    if currency == "USD":
        return {"amount": amount, "currency": "USD", "usd": amount, "usd_per_unit": 1.0}
    from tools.fx import to_usd

    usd, used = to_usd(amount, currency)
    return {"amount": amount, "currency": currency, "usd": usd, "usd_per_unit": used.rate, "fx_date": used.date}


def job_summary(spec: JobSpec, language: str, runs_on: int, excluded: dict[str, int]) -> dict[str, Any]:
    """What the page says about the job: spec, language, model and method, rows it runs on, budget and deadline."""
    from tools.jobtime import build_workload

    try:
        workload = build_workload(spec)
    except ValueError as error:
        raise UserError(_first_line(error)) from error
    budget = budget_of(spec)
    return {
        "language": language,
        "spec": spec.model_dump(exclude_none=True),
        "model_id": workload.arch.id,
        "method": workload.method,
        "excluded": excluded,
        "runs_on": runs_on,
        "budget_usd": budget["usd"] if budget else None,
        "budget": budget,
        "deadline_hours": spec.deadline_hours,
    }


def add_job_marks(rows: list[dict[str, Any]], summary: dict[str, Any]) -> None:
    """Each row's job figures get within budget / deadline and the cost in the budget's currency."""
    budget, deadline = summary["budget"], summary["deadline_hours"]
    for row in rows:
        job = row.get("job")
        if not job or not job.get("fits"):
            continue
        job["meets_budget"] = None if budget is None else job["est_cost"] <= budget["usd"]
        job["meets_deadline"] = None if deadline is None else job["est_hours"] <= deadline
        if budget is not None and budget["currency"] != "USD":
            job["est_cost_budget_currency"] = job["est_cost"] / budget["usd_per_unit"]
