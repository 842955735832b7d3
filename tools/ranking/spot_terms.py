"""The spot calculator's inputs for a plan on `nodes` instances of one provider (restart time, preemption rate of all
nodes, billing rule), and the explained spot assessment of a plan shown to the user, memoised."""

from __future__ import annotations

from functools import lru_cache

from tools.jobtime import billing_for
from tools.spot import Billing, SpotRiskRequest, SpotRiskResult, assess_spot, default_preemption_rate

RESTART_BASE_S = 600.0
"""Fixed part of a spot restart: new instance, image start (planning assumption, as in tools.spot.risk)."""


def spot_terms(provider: str, nodes: int, write_s: float, rate: float | None) -> tuple[float, float, Billing]:
    """(restart seconds, preemption rate per hour of `nodes` instances, billing rule): the spot model's inputs besides
    the job's hours, the same for the run model and the explained assessment."""
    per_node = rate if rate is not None else default_preemption_rate(provider)[0]
    return RESTART_BASE_S + write_s, min(per_node * nodes, 1000.0), billing_for(provider)[0]


def spot_request(
    provider: str,
    nodes: int,
    hours: float,
    write_s: float,
    rate: float | None,
    spot_price: float | None,
    od_price: float | None,
    deadline: float | None,
) -> SpotRiskRequest:
    """The spot calculator's request for `nodes` instances of one provider at one price pair (validated)."""
    restart_s, rate_h, billing = spot_terms(provider, nodes, write_s, rate)
    return SpotRiskRequest(
        job_hours=max(hours, 1e-6),
        checkpoint_write_s=write_s,
        restart_overhead_s=restart_s,
        preemption_rate_per_hour=rate_h,
        provider=provider,
        spot_price_per_hour=spot_price * nodes if spot_price else None,
        on_demand_price_per_hour=od_price * nodes if od_price else None,
        billing_granularity_s=billing.granularity_s,
        billing_minimum_s=billing.minimum_s,
        deadline_hours=deadline,
    )


SPOT_EXPLAINED_MAX = 1024
"""Explained spot assessments kept: one per shown plan (~6 per ranking), so ~160 jobs' worth for follow-ups that
re-rank with the same hours. 16,384 grew a serve process by ~65 MB between 1,000 and 10,000 turns (~4 KB each;
benchmarks/memory_holders.py, issue 27)."""


@lru_cache(maxsize=SPOT_EXPLAINED_MAX)
def spot_cached(
    provider: str,
    nodes: int,
    hours: float,
    write_s: float,
    rate: float | None,
    spot_price: float | None,
    od_price: float | None,
    deadline: float | None,
) -> SpotRiskResult:
    """Spot assessment for `nodes` instances of one provider at one price pair (any node's preemption stops all)."""
    return assess_spot(spot_request(provider, nodes, hours, write_s, rate, spot_price, od_price, deadline))


def clear_costing_caches() -> None:
    """Forget memoised spot assessments."""
    spot_cached.cache_clear()
