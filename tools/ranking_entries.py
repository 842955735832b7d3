"""The full, explained entry of one costed offer (built only for the offers a ranking returns): reasons with codes,
parameters and English lines, billing, overheads, price trust and zones folded in."""

from __future__ import annotations

from typing import Any

from contract.jobspec import JobSpec
from tools.catalog_shapes import effective_prices
from tools.fx import FxUsed
from tools.job_time import JobTime, billing_for
from tools.ranking_models import RankedOffer, Reason
from tools.spot_risk import SpotRiskResult
from tools.topology import TopologyResult


def _reasons(topology: TopologyResult, time: JobTime, spot: SpotRiskResult | None, use_spot: bool, cost: float,
             hours: float, budget: float | None, deadline: float | None) -> list[Reason]:
    """Why an offer sits where it does, as codes with parameters and English lines."""
    reasons = [Reason(code=f"topology_{topology.verdict}", text=topology.summary, params=topology.params),
               Reason(code="throughput", text=f"{time.tokens_per_second:,.0f} tokens/s on {topology.gpu_count} "
                      f"GPU(s), {topology.layout}", params={"tokens_per_second": round(time.tokens_per_second, 1)})]
    if spot is not None and spot.verdict != "no_spot_offer":
        text = (f"spot: saves ${spot.savings_usd:,.2f} vs on-demand with ~{spot.expected_preemptions:.1f} "
                "expected preemptions" if use_spot and spot.savings_usd is not None else
                f"on-demand rather than spot ({spot.reason.replace('_', ' ')})")
        reasons.append(Reason(code=f"spot_{spot.verdict}_{spot.reason}", text=text, params={
            "savings_usd": spot.savings_usd, "expected_preemptions": round(spot.expected_preemptions, 3),
            "checkpoint_interval_hours": spot.checkpoint_interval_hours,
            "p_done_by_deadline": spot.p_spot_done_by_deadline, "preemption_rate_per_hour":
            spot.preemption_rate_per_hour}))
    if budget is not None:
        ok = cost <= budget
        reasons.append(Reason(code="within_budget" if ok else "over_budget",
                              text=f"${cost:,.2f} of a ${budget:,.2f} budget",
                              params={"cost_usd": round(cost, 2), "budget_usd": round(budget, 2)}))
    if deadline is not None:
        reasons.append(Reason(code="meets_deadline" if hours <= deadline else "misses_deadline",
                              text=f"{hours:,.1f} h of {deadline:g} h allowed",
                              params={"hours": round(hours, 3), "deadline_hours": deadline}))
    return reasons


def build_entry(item: Any, spec: JobSpec, budget: float | None, fx_used: FxUsed | None,
           zones_collapsed: int = 0) -> RankedOffer:
    """The full, explained entry for one costed offer."""
    offer, topology, spot = item.offer, item.topology, item.spot
    billing, billing_note = billing_for(offer.provider)
    reasons = _reasons(topology, item.time, spot, item.use_spot, item.cost, item.hours, budget, spec.deadline_hours)
    reasons.append(Reason(code="billing", text=billing_note, params={"granularity_s": billing.granularity_s,
                                                                    "minimum_s": billing.minimum_s}))
    overheads = {k: round(v, 4) for k, v in item.overheads.as_hours().items()}
    reasons.append(Reason(code="overheads", text=(
        f"{sum(overheads.values()) * 60:,.0f} min outside training: instance start, downloads, dataset staging, "
        "checkpoint writes"), params=overheads))
    market = bool(getattr(offer, "on_demand_is_market", False))
    if market:
        reasons.append(Reason(code="market_price", text=f"{offer.provider}'s listed price is a market price that "
                              "can be outbid: treated as interruptible", params={"provider": offer.provider}))
    outlier = getattr(offer, "price_outlier", None)
    if outlier:
        reasons.append(Reason(code="price_outlier", text=(
            f"price far from the same GPU elsewhere ({outlier}); unverified, check it before relying on it"),
            params={"kind": outlier, "peer_median_price": getattr(offer, "peer_median_price", None)}))
    if zones_collapsed:
        reasons.append(Reason(code="zones_collapsed", text=f"also in {zones_collapsed} other zone(s) of "
                              f"{offer.region} at a higher price", params={"zones": zones_collapsed}))
    on_demand, interruptible = effective_prices(offer)
    return RankedOffer(
        provider=offer.provider, instance_type=offer.instance_type, gpu=offer.gpu,
        gpu_form_factor=offer.gpu_form_factor, gpu_count=offer.gpu_count, nodes=item.nodes,
        total_gpus=offer.gpu_count * item.nodes, vram_gib_per_gpu=offer.vram_gib_per_gpu, region=offer.region,
        regions=list(item.group.regions) or ([offer.region] if offer.region else []), zones_collapsed=zones_collapsed,
        spot=item.use_spot, price_per_hour=item.price, on_demand_price_per_hour=on_demand,
        spot_price_per_hour=interruptible, on_demand_is_market=market, price_outlier=outlier,
        peer_median_price=getattr(offer, "peer_median_price", None), est_hours=item.hours,
        train_hours=item.time.hours, overhead_hours=overheads, est_cost=item.cost,
        est_cost_budget_currency=item.cost / fx_used.rate if fx_used else None, billed_hours=item.billed_hours,
        fits=True, per_gpu_gib=topology.per_gpu_gib, layout=topology.layout, topology_verdict=topology.verdict,
        topology_params=topology.params, exposed_comm_share=topology.exposed_comm_share,
        spot_verdict=spot.verdict if spot else None, spot_savings_usd=spot.savings_usd if spot else None,
        p_done_by_deadline=item.p_done, meets_budget=item.meets_budget, meets_deadline=item.meets_deadline,
        reasons=reasons)
