"""Spot-risk calculator: checkpoint interval, expected spot wall time and cost, deadline odds, spot-or-on-demand verdict.

Model (hardware.md §3.1): preemptions arrive as a Poisson process with rate λ (MTBF M = 1/λ) while the job runs;
the job checkpoints every τ seconds of work (Daly's optimum), each checkpoint takes δ seconds, and each preemption
costs the work since the last checkpoint plus a restart overhead R (new instance, image start, checkpoint reload),
during which the job cannot be preempted. Expected values are closed forms of this model; the deadline probability
puts an exact atom at "no preemption" and a moment-matched log-normal on the extra time. Tests cross-check both
against a seeded Monte Carlo simulation of the same model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from tools.providers import record_of
from tools.spot.completion import (
    Billing,
    Completion,
    billed_seconds,
    completion_on_notice,
    completion_periodic,
    daly_interval_s,
    expected_billed_s,
    probability_done_by,
    young_interval_s,
)

UnboundedHours = Annotated[
    float, WithJsonSchema({"anyOf": [{"type": "number"}, {"type": "null"}]}, mode="serialization")
]
"""A float that is infinite when spot never finishes (reason never_finishes); JSON has no infinity: null there."""

SpotVerdict = Literal["spot", "on_demand", "no_spot_offer"]
VerdictReason = Literal[
    "cheaper", "not_cheaper", "deadline_risk", "no_spot_price", "no_on_demand_price", "never_finishes"
]

HOUR = 3600.0
RATE_SOURCE = (
    "planning assumption: no provider publishes hourly GPU preemption rates (AWS "
    "Spot Advisor gives only monthly reclaim bands <5 % .. >20 %); override with the preemption rate"
)
HYPERSCALER_RATE_PER_HOUR = 0.05
"""One preemption per ~20 h of running: AWS, GCP, Azure and other reclaim-on-demand spot markets."""
MARKETPLACE_RATE_PER_HOUR = 0.10
"""One per ~10 h: bid-based marketplaces where 'someone bids higher or starts on-demand' (RunPod, Vast; §3)."""
DEFAULT_RESTART_S = 600.0
"""Restart overhead: new instance, container start and checkpoint reload (assumption, 10 min)."""
DEFAULT_DEADLINE_CONFIDENCE = 0.9


@lru_cache(maxsize=256)
def default_preemption_rate(provider: str | None) -> tuple[float, str]:
    """Default preemption rate per hour for a provider, with where the number comes from."""
    record = record_of(provider or "")
    if record is not None and record.spot_marketplace:  # the provider record's `spot_marketplace`
        return MARKETPLACE_RATE_PER_HOUR, f"{RATE_SOURCE}; marketplace default {MARKETPLACE_RATE_PER_HOUR}/h"
    return HYPERSCALER_RATE_PER_HOUR, f"{RATE_SOURCE}; default {HYPERSCALER_RATE_PER_HOUR}/h"


class SpotRiskRequest(BaseModel):
    """Everything the spot calculator needs; times in hours or seconds as named, prices in USD per hour."""

    model_config = ConfigDict(extra="forbid")

    job_hours: float = Field(
        gt=0, le=1e6, allow_inf_nan=False, description="Uninterrupted run time of the job (what on-demand takes)."
    )
    checkpoint_write_s: float = Field(
        default=60.0, ge=0, le=1e6, allow_inf_nan=False, description="Seconds to write one checkpoint."
    )
    restart_overhead_s: float = Field(
        default=DEFAULT_RESTART_S,
        ge=0,
        le=1e6,
        allow_inf_nan=False,
        description="Seconds to relaunch and reload after a preemption.",
    )
    preemption_rate_per_hour: float | None = Field(
        default=None,
        ge=0,
        le=1000,
        allow_inf_nan=False,
        description="Expected preemptions per hour; the provider's planning figure when omitted.",
    )
    provider: str | None = Field(
        default=None, max_length=64, description="Provider id (its notice time, billing and preemption figures)."
    )
    spot_price_per_hour: float | None = Field(default=None, gt=0, allow_inf_nan=False, description="Spot USD per hour.")
    on_demand_price_per_hour: float | None = Field(
        default=None, gt=0, allow_inf_nan=False, description="On-demand USD per hour."
    )
    billing_granularity_s: float = Field(
        default=1.0, gt=0, le=86400, allow_inf_nan=False, description="Billing increment in seconds (1 = per second)."
    )
    billing_minimum_s: float = Field(
        default=0.0, ge=0, le=86400 * 31, allow_inf_nan=False, description="Minimum billed seconds per run."
    )
    deadline_hours: float | None = Field(
        default=None, gt=0, allow_inf_nan=False, description="Hours the job must finish within."
    )
    deadline_confidence: float = Field(
        default=DEFAULT_DEADLINE_CONFIDENCE,
        gt=0,
        lt=1,
        description="Probability spot must meet the deadline with (default 0.9).",
    )
    notice_s: float | None = Field(
        default=None,
        ge=0,
        allow_inf_nan=False,
        description="Preemption notice; the provider's documented one when omitted.",
    )
    checkpoint_on_notice: bool = Field(
        default=False, description="The job saves a checkpoint when the preemption notice arrives."
    )


class SpotRiskResult(BaseModel):
    """Spot versus on-demand for one job on one offer, with the numbers and assumptions behind the verdict."""

    verdict: SpotVerdict
    reason: VerdictReason
    savings_usd: float | None = Field(description="Expected on-demand cost minus expected spot cost.")
    savings_fraction: float | None
    preemption_rate_per_hour: float
    preemption_rate_source: str
    mtbf_hours: float | None
    checkpoint_interval_hours: float | None = Field(description="Daly optimum; None when no periodic checkpoint.")
    young_interval_hours: float | None
    checkpoint_on_notice: bool
    expected_preemptions: UnboundedHours
    expected_spot_hours: UnboundedHours
    spot_hours_no_preemption: float
    expected_spot_billed_hours: UnboundedHours
    expected_spot_cost_usd: float | None
    on_demand_hours: float
    on_demand_billed_hours: float
    on_demand_cost_usd: float | None
    p_spot_done_by_deadline: float | None
    p_on_demand_done_by_deadline: float | None
    deadline_confidence: float
    assumptions: list[str]


@lru_cache(maxsize=256)
def provider_notice(provider: str | None) -> float | None:
    """Documented spot notice of a provider in seconds (tools/providers/data/<id>.json), None when unknown."""
    from tools.providers import get_provider

    info = get_provider(provider) if provider else None
    return float(info.spot_notice_s) if info and info.spot_notice_s is not None else None


def _completion_for(
    job_hours: float, delta: float, restart: float, rate_per_s: float, notice: float | None, checkpoint_on_notice: bool
) -> tuple[Completion, float | None, bool]:
    """Pick the checkpoint policy and return the completion model, the interval used and whether notice saves work."""
    work = job_hours * HOUR
    on_notice = checkpoint_on_notice and notice is not None and delta <= notice
    if rate_per_s <= 0:
        return (
            Completion(base_s=work, mean_s=work, variance_s2=0.0, p_no_preemption=1.0, expected_preemptions=0.0),
            None,
            on_notice,
        )
    if on_notice or delta == 0:
        return completion_on_notice(work, delta, restart, rate_per_s), None, on_notice
    interval = daly_interval_s(delta, 1.0 / rate_per_s)
    if interval >= work:
        return completion_periodic(work, work, 0.0, restart, rate_per_s), None, False
    return completion_periodic(work, interval, delta, restart, rate_per_s), interval, False


@dataclass(frozen=True, kw_only=True)
class RunModel:
    """The price-independent part of a spot assessment: how long the run takes, what is billed, the deadline odds."""

    completion: Completion
    interval_s: float | None
    on_notice: bool
    spot_billed_s: float
    od_billed_s: float
    p_spot: float | None
    p_od: float | None


@lru_cache(maxsize=8192)
def run_model(
    job_hours: float,
    delta: float,
    restart: float,
    rate_h: float,
    notice: float | None,
    checkpoint_on_notice: bool,
    granularity_s: float,
    minimum_s: float,
    deadline_hours: float | None,
) -> RunModel:
    """Completion, billed seconds and deadline odds; cached, since many offers share them (prices only scale)."""
    rate_s = rate_h / HOUR
    billing = Billing(granularity_s=granularity_s, minimum_s=minimum_s)
    completion, interval, on_notice = _completion_for(job_hours, delta, restart, rate_s, notice, checkpoint_on_notice)
    work = job_hours * HOUR
    finite = math.isfinite(completion.mean_s)
    deadline_s = deadline_hours * HOUR if deadline_hours else None
    return RunModel(
        completion=completion,
        interval_s=interval,
        on_notice=on_notice,
        spot_billed_s=expected_billed_s(completion, restart, rate_s, billing) if finite else math.inf,
        od_billed_s=billed_seconds(work, billing),
        p_spot=probability_done_by(completion, deadline_s) if deadline_s is not None else None,
        p_od=(1.0 if work <= deadline_s else 0.0) if deadline_s is not None else None,
    )


def assess_spot(request: SpotRiskRequest) -> SpotRiskResult:
    """Expected spot time, cost and deadline odds against on-demand, and which one to rent."""
    if request.preemption_rate_per_hour is not None:
        rate_h, rate_source = request.preemption_rate_per_hour, "given"
    else:
        rate_h, rate_source = default_preemption_rate(request.provider)
    notice = request.notice_s if request.notice_s is not None else provider_notice(request.provider)
    run = run_model(
        request.job_hours,
        request.checkpoint_write_s,
        request.restart_overhead_s,
        rate_h,
        notice,
        request.checkpoint_on_notice,
        request.billing_granularity_s,
        request.billing_minimum_s,
        request.deadline_hours,
    )
    completion, interval, on_notice = run.completion, run.interval_s, run.on_notice
    finite = math.isfinite(completion.mean_s)
    spot_billed, od_billed = run.spot_billed_s, run.od_billed_s
    verdict, reason, spot_cost, od_cost = price_outcome(
        run, request.spot_price_per_hour, request.on_demand_price_per_hour, request.deadline_confidence
    )
    p_spot, p_od = run.p_spot, run.p_od
    savings = od_cost - spot_cost if spot_cost is not None and od_cost is not None and finite else None
    mtbf_h = 1.0 / rate_h if rate_h > 0 else None
    assumptions = [
        f"preemption rate {rate_h:g}/h ({rate_source})",
        f"restart overhead {request.restart_overhead_s:g} s per preemption, billed, not itself preempted",
        f"checkpoint write {request.checkpoint_write_s:g} s",
        "preemptions are a Poisson process in running time (memoryless)",
        f"billing per {request.billing_granularity_s:g} s with a {request.billing_minimum_s:g} s minimum per instance "
        "session",
    ]
    if on_notice:
        assumptions.append("a checkpoint is written inside the preemption notice, so no work is lost")
    if request.deadline_hours:
        assumptions.append(f"spot must finish by the deadline with probability >= {request.deadline_confidence:g}")
    return SpotRiskResult(
        verdict=verdict,
        reason=reason,
        savings_usd=savings,
        savings_fraction=(savings / od_cost) if savings is not None and od_cost else None,
        preemption_rate_per_hour=rate_h,
        preemption_rate_source=rate_source,
        mtbf_hours=mtbf_h,
        checkpoint_interval_hours=interval / HOUR if interval else None,
        young_interval_hours=(
            young_interval_s(request.checkpoint_write_s, HOUR / rate_h) / HOUR
            if rate_h > 0 and request.checkpoint_write_s > 0
            else None
        ),
        checkpoint_on_notice=on_notice,
        expected_preemptions=completion.expected_preemptions,
        expected_spot_hours=completion.mean_s / HOUR,
        spot_hours_no_preemption=completion.base_s / HOUR,
        expected_spot_billed_hours=spot_billed / HOUR,
        expected_spot_cost_usd=spot_cost,
        on_demand_hours=request.job_hours,
        on_demand_billed_hours=od_billed / HOUR,
        on_demand_cost_usd=od_cost,
        p_spot_done_by_deadline=p_spot,
        p_on_demand_done_by_deadline=p_od,
        deadline_confidence=request.deadline_confidence,
        assumptions=assumptions,
    )


def price_outcome(
    run: RunModel,
    spot_price_per_hour: float | None,
    on_demand_price_per_hour: float | None,
    confidence: float = DEFAULT_DEADLINE_CONFIDENCE,
) -> tuple[SpotVerdict, VerdictReason, float | None, float | None]:
    """(verdict, reason, expected spot cost, on-demand cost) of a run model at one price pair: what `assess_spot`
    decides, without building its explained result (the ranking costs hundreds of offers per run model)."""
    spot_cost = spot_price_per_hour * run.spot_billed_s / HOUR if spot_price_per_hour else None
    od_cost = on_demand_price_per_hour * run.od_billed_s / HOUR if on_demand_price_per_hour else None
    verdict, reason = _decide(spot_cost, od_cost, run.p_spot, confidence, math.isfinite(run.completion.mean_s))
    return verdict, reason, spot_cost, od_cost


def _decide(
    spot_cost: float | None, od_cost: float | None, p_spot: float | None, confidence: float, finite: bool
) -> tuple[SpotVerdict, VerdictReason]:
    """Spot when it is offered, expected to be cheaper and likely enough to meet the deadline."""
    if spot_cost is None:
        return "no_spot_offer", "no_spot_price"
    if not finite:
        return "on_demand", "never_finishes"
    if p_spot is not None and p_spot < confidence:
        return "on_demand", "deadline_risk"
    if od_cost is None:
        return "spot", "no_on_demand_price"
    if spot_cost < od_cost:
        return "spot", "cheaper"
    return "on_demand", "not_cheaper"
