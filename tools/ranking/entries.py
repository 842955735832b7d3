"""The full, explained entry of one costed offer (built only for the offers a ranking returns): reasons with codes,
parameters and English lines, billing, overheads, price trust, zones folded in, the training settings the price was
computed with, the limits it misses, and for a long or multi-node spot run the interruption and capacity figures."""

from __future__ import annotations

from typing import Any

from contract.jobspec import JobSpec
from tools.catalog import effective_prices
from tools.fx import FxUsed
from tools.jobtime import Assessment, JobTime, TopologyResult, billing_for
from tools.memory import EstimateRequest
from tools.ranking.results import RankedOffer, Reason
from tools.ranking.spot_terms import RESTART_BASE_S
from tools.spot import SpotRiskResult

LONG_SPOT_HOURS = 24.0
"""A spot run this long (or on several nodes) gets its interruption and capacity figures stated."""


def long_spot_reason(spot: SpotRiskResult, nodes: int, hours: float, restart_s: float) -> Reason | None:
    """Interruptions, restarts and capacity of a spot run over a day or on several nodes; None otherwise."""
    if hours < LONG_SPOT_HOURS and nodes < 2:
        return None
    count = spot.expected_preemptions
    lost = max(0.0, float(spot.expected_spot_hours) - spot.spot_hours_no_preemption)
    params = {
        "nodes": nodes,
        "hours": round(hours, 1),
        "days": round(hours / 24, 1),
        "expected_preemptions": round(count, 1),
        "mtbf_hours": spot.mtbf_hours,
        "restart_minutes": round(restart_s / 60, 1),
        "lost_hours": round(lost, 1),
        "p_done_by_deadline": spot.p_spot_done_by_deadline,
    }
    every = f" (one every ~{spot.mtbf_hours:,.1f} h)" if spot.mtbf_hours else ""
    scope = f"all {nodes} nodes" if nodes > 1 else "the node"
    return Reason(
        code="long_spot_risk",
        params=params,
        text=(
            f"spot over {hours / 24:,.1f} days on {nodes} node(s): ~{count:,.0f} expected interruptions{every}, each "
            f"relaunching {scope} (~{restart_s / 60:,.0f} min plus lost work, ~{lost:,.0f} h in all); spot capacity for "
            f"{scope} at once is not guaranteed and waiting for it is not in these hours"
        ),
    )


def _reasons(
    topology: Assessment | TopologyResult,
    time: JobTime,
    spot: SpotRiskResult | None,
    use_spot: bool,
    cost: float,
    hours: float,
    budget: float | None,
    deadline: float | None,
) -> list[Reason]:
    """Why an offer sits where it does, as codes with parameters and English lines."""
    reasons = [
        Reason(code=f"topology_{topology.verdict}", text=topology.summary, params=topology.params),
        Reason(
            code="throughput",
            text=f"{time.tokens_per_second:,.0f} tokens/s on {topology.gpu_count} GPU(s), {topology.layout}",
            params={"tokens_per_second": round(time.tokens_per_second, 1)},
        ),
    ]
    if spot is not None and spot.verdict != "no_spot_offer":
        text = (
            f"spot: saves ${spot.savings_usd:,.2f} vs on-demand with ~{spot.expected_preemptions:.1f} "
            "expected preemptions"
            if use_spot and spot.savings_usd is not None
            else f"on-demand rather than spot ({spot.reason.replace('_', ' ')})"
        )
        reasons.append(
            Reason(
                code=f"spot_{spot.verdict}_{spot.reason}",
                text=text,
                params={
                    "savings_usd": spot.savings_usd,
                    "expected_preemptions": round(spot.expected_preemptions, 3),
                    "checkpoint_interval_hours": spot.checkpoint_interval_hours,
                    "p_done_by_deadline": spot.p_spot_done_by_deadline,
                    "preemption_rate_per_hour": spot.preemption_rate_per_hour,
                },
            )
        )
    if budget is not None:
        ok = cost <= budget
        reasons.append(
            Reason(
                code="within_budget" if ok else "over_budget",
                text=f"${cost:,.2f} of a ${budget:,.2f} budget",
                params={"cost_usd": round(cost, 2), "budget_usd": round(budget, 2)},
            )
        )
    if deadline is not None:
        reasons.append(
            Reason(
                code="meets_deadline" if hours <= deadline else "misses_deadline",
                text=f"{hours:,.1f} h of {deadline:g} h allowed",
                params={"hours": round(hours, 3), "deadline_hours": deadline},
            )
        )
    return reasons


def settings_of(topology: Assessment | TopologyResult, request: EstimateRequest | None) -> dict[str, Any]:
    """The training settings the plan's memory, time and price were computed with (the layout's choices first)."""
    found: dict[str, Any] = {
        "layout": topology.layout,
        "sharding": topology.sharding,
        "tensor_parallel": topology.tensor_parallel,
        "gradient_checkpointing": topology.gradient_checkpointing,
        "gradient_accumulation_steps": topology.gradient_accumulation_steps,
    }
    if request is not None:
        adapters = request.method in ("lora", "qlora")
        found |= {
            "micro_batch_size": topology.micro_batch_size or request.micro_batch_size,
            "seq_len": request.seq_len,
            "method": request.method,
            "lora_rank": request.lora_rank if adapters else None,
        }
        if found["gradient_checkpointing"] is None:
            found["gradient_checkpointing"] = request.gradient_checkpointing
    return found


def misses_of(meets_budget: bool | None, meets_deadline: bool | None) -> list[str]:
    """The user's limits a plan misses: 'budget', 'deadline'."""
    return [name for name, ok in (("budget", meets_budget), ("deadline", meets_deadline)) if ok is False]


def build_entry(
    item: Any,
    spec: JobSpec,
    budget: float | None,
    fx_used: FxUsed | None,
    zones_collapsed: int = 0,
    request: EstimateRequest | None = None,
) -> RankedOffer:
    """The full, explained entry for one costed offer (`request`: the estimator request of the job)."""
    offer, topology, spot = item.offer, item.topology, item.spot  # what its explanation would say, unexplained
    billing, billing_note = billing_for(offer.provider)
    reasons = _reasons(topology, item.time, spot, item.use_spot, item.cost, item.hours, budget, spec.deadline_hours)
    settings = settings_of(topology, request)
    if request is not None and settings["micro_batch_size"] < request.micro_batch_size:
        reasons.append(
            Reason(
                code="micro_batch_lowered",
                text=(
                    f"micro-batch {settings['micro_batch_size']} instead of {request.micro_batch_size} (the stated one does "
                    f"not fit this layout), {settings['gradient_accumulation_steps']} accumulation steps"
                ),
                params={
                    "stated": request.micro_batch_size,
                    "used": settings["micro_batch_size"],
                    "gradient_accumulation_steps": settings["gradient_accumulation_steps"],
                },
            )
        )
    if item.use_spot and spot is not None and item.spot_args is not None:
        long_run = long_spot_reason(spot, item.nodes, item.hours, RESTART_BASE_S + item.spot_args[3])
        if long_run is not None:
            reasons.append(long_run)
    reasons.append(
        Reason(
            code="billing",
            text=billing_note,
            params={"granularity_s": billing.granularity_s, "minimum_s": billing.minimum_s},
        )
    )
    overheads = {k: round(v, 4) for k, v in item.overheads.as_hours().items()}
    reasons.append(
        Reason(
            code="overheads",
            text=(
                f"{sum(overheads.values()) * 60:,.0f} min outside training: instance start, downloads, dataset staging, "
                "checkpoint writes"
            ),
            params=overheads,
        )
    )
    market = bool(getattr(offer, "on_demand_is_market", False))
    if market:
        reasons.append(
            Reason(
                code="market_price",
                text=f"{offer.provider}'s listed price is a market price that can be outbid: treated as interruptible",
                params={"provider": offer.provider},
            )
        )
    outlier = getattr(offer, "price_outlier", None)
    if outlier:
        reasons.append(
            Reason(
                code="price_outlier",
                text=(f"price far from the same GPU elsewhere ({outlier}); unverified, check it before relying on it"),
                params={"kind": outlier, "peer_median_price": getattr(offer, "peer_median_price", None)},
            )
        )
    if zones_collapsed:
        reasons.append(
            Reason(
                code="zones_collapsed",
                text=f"also in {zones_collapsed} other zone(s) of {offer.region} at a higher price",
                params={"zones": zones_collapsed},
            )
        )
    on_demand, interruptible = effective_prices(offer)
    return RankedOffer(
        provider=offer.provider,
        instance_type=offer.instance_type,
        gpu=offer.gpu,
        gpu_form_factor=offer.gpu_form_factor,
        gpu_count=offer.gpu_count,
        nodes=item.nodes,
        total_gpus=offer.gpu_count * item.nodes,
        vram_gib_per_gpu=offer.vram_gib_per_gpu,
        region=offer.region,
        regions=list(item.group.regions) or ([offer.region] if offer.region else []),
        zones_collapsed=zones_collapsed,
        spot=item.use_spot,
        price_per_hour=item.price,
        on_demand_price_per_hour=on_demand,
        spot_price_per_hour=interruptible,
        on_demand_is_market=market,
        price_outlier=outlier,
        peer_median_price=getattr(offer, "peer_median_price", None),
        est_hours=item.hours,
        train_hours=item.time.hours,
        overhead_hours=overheads,
        est_cost=item.cost,
        est_cost_budget_currency=item.cost / fx_used.rate if fx_used else None,
        billed_hours=item.billed_hours,
        fits=True,
        per_gpu_gib=topology.per_gpu_gib,
        layout=topology.layout,
        topology_verdict=topology.verdict,
        topology_params=topology.params,
        exposed_comm_share=topology.exposed_comm_share,
        spot_verdict=spot.verdict if spot else None,
        spot_savings_usd=spot.savings_usd if spot else None,
        p_done_by_deadline=item.p_done,
        meets_budget=item.meets_budget,
        meets_deadline=item.meets_deadline,
        misses=misses_of(item.meets_budget, item.meets_deadline),
        settings=settings,
        reasons=reasons,
    )
