"""The structured verdict of a turn (what the web widget and Slack can show without reading the prose)."""

from __future__ import annotations

from typing import Any

EMPTY = {
    "gpu": None,
    "count": None,
    "provider": None,
    "region": None,
    "instance": None,
    "spot": None,
    "total_cost": None,
    "currency": None,
    "total_cost_budget_currency": None,
    "budget_currency": None,
    "hours": None,
    "fits_budget": None,
    "fits_deadline": None,
    "answer": None,
}


def verdict(
    answer_kind: str, offer: dict[str, Any] | None = None, spec: dict[str, Any] | None = None, answer: str | None = None
) -> dict[str, Any]:
    """{answer_kind, gpu, count, provider, region, instance, spot, total_cost, currency, hours, fits_budget,
    fits_deadline, answer}; rental fields are None when the turn recommends nothing."""
    result = dict(EMPTY, answer_kind=answer_kind, answer=answer)
    if offer:
        budget = (spec or {}).get("budget") or {}
        result |= {
            "gpu": offer["gpu"],
            "count": offer["total_gpus"],
            "provider": offer["provider"],
            "region": offer.get("region"),
            "instance": offer.get("instance_type"),
            "spot": offer.get("spot"),
            "total_cost": offer["est_cost"],
            "currency": "USD",
            "total_cost_budget_currency": offer.get("est_cost_budget_currency"),
            "budget_currency": budget.get("currency"),
            "hours": offer["est_hours"],
            "fits_budget": offer.get("meets_budget"),
            "fits_deadline": offer.get("meets_deadline"),
        }
    return result


SUMMARY_KEYS = (
    "provider",
    "instance_type",
    "region",
    "spot",
    "nodes",
    "gpu",
    "total_gpus",
    "est_hours",
    "est_cost",
    "price_per_hour",
)
"""What a later turn keeps of a rental: what tells it apart from others and its figures."""


def rental_summary(offer: dict[str, Any] | None) -> dict[str, Any] | None:
    """The few fields of an offer the next turn needs to say what it was before."""
    if not offer:
        return None
    return {key: offer.get(key) for key in SUMMARY_KEYS}
