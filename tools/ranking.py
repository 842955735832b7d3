"""Rank catalog offers for a JobSpec by total job cost: memory first, then topology, then price and billing model.

For each offer: does the job fit (estimator per layout, with a stated margin), how long it takes (FLOPs / achievable
throughput, slowed by exposed communication), what it costs on demand and on spot (billing rounding, preemption
risk), and whether it meets the budget, the deadline, the spot preference and the user's GPU/count/provider/region
wishes. Offers are grouped by hardware shape so the estimator and topology run once per shape, not per offer.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from contract.jobspec import JobSpec
from tools.catalog import Offer, ensure_db, query_offers, read_meta
from tools.fx import FxTable, FxUsed, load_fx, to_usd
from tools.job_time import JobTime, Tokens, billing_for, job_time, job_tokens, run_cost
from tools.spot_risk import SpotRiskRequest, SpotRiskResult, assess_spot, default_preemption_rate
from tools.topology import DEFAULT_MEMORY_MARGIN, Candidate, TopologyResult, Workload, build_workload, check_topology

ExclusionReason = Literal["too_little_vram", "does_not_fit", "needs_nvlink_node", "no_speed_data", "no_price",
                          "spot_only_offer", "over_budget", "misses_deadline", "gpu_count_mismatch"]
CHECKPOINT_WRITE_GBS = 1.0
"""Checkpoint write and reload speed to persistent storage, GB/s (planning assumption)."""
RESTART_BASE_S = 600.0
"""Fixed part of a spot restart: new instance, image start (planning assumption, as in tools.spot_risk)."""
MULTI_NODE_MIN_GPUS = 8
"""Multi-node layouts are built only from full 8-GPU (or larger) instances."""


class Reason(BaseModel):
    """One reason behind an offer's place: a code and parameters for the agent, and an English line."""

    code: str
    text: str
    params: dict[str, Any] = Field(default_factory=dict)


class RankedOffer(BaseModel):
    """One offer with the job's estimated time and cost on it."""

    provider: str
    instance_type: str
    gpu: str
    gpu_form_factor: str | None
    gpu_count: int = Field(description="GPUs per instance.")
    nodes: int = Field(description="Instances rented together (multi-node when > 1).")
    total_gpus: int
    vram_gib_per_gpu: float | None
    region: str | None
    regions: list[str] = Field(description="Every region with the same instance at the same prices.")
    spot: bool = Field(description="True when the estimate is for spot/interruptible capacity.")
    price_per_hour: float = Field(description="USD per hour for all instances at the chosen pricing (spot or not).")
    on_demand_price_per_hour: float | None
    spot_price_per_hour: float | None
    est_hours: float = Field(description="Expected wall-clock hours (spot: including preemptions).")
    est_cost: float = Field(description="Expected total cost in USD, billing rounding included.")
    est_cost_budget_currency: float | None
    billed_hours: float
    fits: bool
    per_gpu_gib: float | None
    layout: str | None
    topology_verdict: str
    topology_params: dict[str, Any]
    exposed_comm_share: float | None
    spot_verdict: str | None
    spot_savings_usd: float | None
    p_done_by_deadline: float | None
    meets_budget: bool | None
    meets_deadline: bool | None
    reasons: list[Reason]


class RankingResult(BaseModel):
    """Offers that meet every constraint, cheapest first, plus alternatives and what was excluded and why."""

    offers: list[RankedOffer]
    total_eligible: int
    cheapest_that_fits: RankedOffer | None = Field(description="Cheapest offer the job fits on, ignoring budget "
                                                               "and deadline.")
    fastest: RankedOffer | None = Field(description="Fastest offer the job fits on, ignoring budget and deadline.")
    excluded: dict[str, int]
    considered: int
    budget_usd: float | None
    fx: FxUsed | None
    deadline_hours: float | None
    memory_margin: float
    model_id: str
    method: str
    tokens: float
    catalog: dict[str, Any]
    assumptions: list[str]


@dataclass(frozen=True, kw_only=True)
class _Shape:
    """The hardware facts topology and time depend on; offers with the same shape share one evaluation."""

    gpu: str
    form_factor: str | None
    gpus_per_node: int
    nodes: int
    interconnect: str
    nvlink_gbs: float | None
    vram_gib: float | None
    node_gbps: float | None


@dataclass(frozen=True, kw_only=True)
class _Evaluation:
    """Topology verdict and job time for one shape."""

    topology: TopologyResult | None
    time: JobTime | None
    error: str | None = None


def _shape(offer: Offer, nodes: int) -> _Shape:
    """Hardware shape of `nodes` copies of an offer."""
    node_gbps = offer.inter_node_gbps_per_gpu * offer.gpu_count if offer.inter_node_gbps_per_gpu else None
    interconnect = offer.interconnect if offer.interconnect in ("nvlink", "pcie") else "unknown"
    return _Shape(gpu=offer.gpu, form_factor=offer.gpu_form_factor, gpus_per_node=offer.gpu_count, nodes=nodes,
                  interconnect=interconnect, nvlink_gbs=offer.nvlink_gbs, vram_gib=offer.vram_gib_per_gpu,
                  node_gbps=node_gbps)


_TOPOLOGY_CACHE: dict[tuple[str, float, _Shape], TopologyResult | None] = {}
"""Topology per (estimator request, margin, shape): it depends on nothing else, so repeated turns reuse it."""
_TOPOLOGY_CACHE_MAX = 20_000


def _evaluate(shape: _Shape, workload: Workload, tokens: Tokens, margin: float) -> _Evaluation:
    """Run the topology checker (cached) and the time model for one shape."""
    key = (workload.request.model_dump_json(), margin, shape)
    if key not in _TOPOLOGY_CACHE:
        if len(_TOPOLOGY_CACHE) >= _TOPOLOGY_CACHE_MAX:
            _TOPOLOGY_CACHE.clear()
        _TOPOLOGY_CACHE[key] = _check(shape, workload, margin)
    topology = _TOPOLOGY_CACHE[key]
    if topology is None:
        return _Evaluation(topology=None, time=None, error="invalid candidate")
    return _Evaluation(topology=topology, time=job_time(workload, topology, tokens))


def _check(shape: _Shape, workload: Workload, margin: float) -> TopologyResult | None:
    """Topology verdict for one shape; None when the shape itself is inconsistent."""
    candidate = Candidate(gpu=shape.gpu, form_factor=shape.form_factor, gpu_count=shape.gpus_per_node * shape.nodes,
                          gpus_per_node=shape.gpus_per_node, interconnect=shape.interconnect,  # type: ignore[arg-type]
                          nvlink_gbs=shape.nvlink_gbs, inter_node_gbps=shape.node_gbps, vram_gib=shape.vram_gib)
    try:
        return check_topology(workload, candidate, margin=margin)
    except ValueError:
        return None


@dataclass(frozen=True, kw_only=True)
class _Costed:
    """Phase-one numbers for one offer; full RankedOffer objects are built only for what is returned."""

    offer: Offer
    nodes: int
    topology: TopologyResult
    time: JobTime
    spot: SpotRiskResult | None
    use_spot: bool
    cost: float
    hours: float
    billed_hours: float
    price: float
    p_done: float | None
    meets_budget: bool | None
    meets_deadline: bool | None


def _nodes_for(offer: Offer, wanted_gpus: int | None) -> int | None:
    """Instances of `offer` that give the wanted GPU count; None when the count cannot be met with it."""
    if wanted_gpus is None or wanted_gpus == offer.gpu_count:
        return 1
    if wanted_gpus > offer.gpu_count and offer.gpu_count >= MULTI_NODE_MIN_GPUS and wanted_gpus % offer.gpu_count == 0:
        return wanted_gpus // offer.gpu_count
    return None


def _checkpoint_bytes(workload: Workload) -> float:
    """Bytes of one resumable checkpoint: BF16 weights (adapters only when the base is frozen) + AdamW state."""
    adapters = workload.method in ("lora", "qlora")
    weights = (workload.trainable_params if adapters else workload.total_params) * 2.0
    return weights + workload.trainable_params * 12.0


def _vram_floor(workload: Workload, max_gpus: int, margin: float) -> float:
    """Smallest memory per GPU any layout on up to `max_gpus` GPUs could get by with (prefilter for the query)."""
    from tools.estimator import estimate

    floors = []
    for sharding, tp in (("fsdp", 1), ("none", max_gpus)):
        try:
            floors.append(estimate(workload.request.model_copy(
                update={"num_gpus": max_gpus, "sharding": sharding, "tensor_parallel": tp})).per_gpu_gib)
        except ValueError:
            continue
    return min(floors, default=0.0) / (1.0 - margin) * 0.999


@lru_cache(maxsize=64)
def _cached_groups(path: str, mtime: float, gpu: str | None, providers: tuple[str, ...] | None,
                   regions: tuple[str, ...] | None) -> tuple[tuple[tuple[Offer, ...], _Shape], ...]:
    """Catalog rows matching the user's wishes, grouped so that the same instance at the same prices in many zones
    is costed once; cached per database file version, since every job with the same wishes reuses them (the memory
    floor, which differs per job, is applied to the groups afterwards). Each group comes with its one-node shape."""
    same: dict[tuple[Any, ...], list[Offer]] = {}
    for offer in query_offers(path, gpu=gpu, providers=providers, regions=regions):
        same.setdefault((offer.provider, offer.instance_type, offer.price_per_hour, offer.spot_price_per_hour,
                         offer.gpu, offer.gpu_form_factor, offer.gpu_count, offer.vram_gib_per_gpu,
                         offer.interconnect, offer.nvlink_gbs, offer.inter_node_gbps_per_gpu), []).append(offer)
    return tuple((tuple(group), _shape(group[0], 1)) for group in same.values())


def _budget_usd(spec: JobSpec, fx_table: FxTable | None) -> tuple[float | None, FxUsed | None]:
    """The budget in USD and the conversion used (None for a USD budget or no budget)."""
    if spec.budget is None:
        return None, None
    if spec.budget.currency == "USD":
        return spec.budget.amount, None
    return to_usd(spec.budget.amount, spec.budget.currency, fx_table)


@lru_cache(maxsize=4096)
def _spot_cached(provider: str, nodes: int, hours: float, write_s: float, rate: float | None,
                 spot_price: float | None, od_price: float | None, deadline: float | None) -> SpotRiskResult:
    """Spot assessment for `nodes` instances of one provider at one price pair (any node's preemption stops all)."""
    per_node = rate if rate is not None else default_preemption_rate(provider)[0]
    billing, _ = billing_for(provider)
    return assess_spot(SpotRiskRequest(
        job_hours=max(hours, 1e-6), checkpoint_write_s=write_s, restart_overhead_s=RESTART_BASE_S + write_s,
        preemption_rate_per_hour=min(per_node * nodes, 1000.0), provider=provider,
        spot_price_per_hour=spot_price * nodes if spot_price else None,
        on_demand_price_per_hour=od_price * nodes if od_price else None,
        billing_granularity_s=billing.granularity_s, billing_minimum_s=billing.minimum_s, deadline_hours=deadline))


def _spot_for(offer: Offer, nodes: int, hours: float, workload: Workload, spec: JobSpec,
              rate_override: float | None) -> SpotRiskResult:
    """Spot assessment for an offer rented `nodes` times."""
    write_s = _checkpoint_bytes(workload) / (CHECKPOINT_WRITE_GBS * 1e9)
    return _spot_cached(offer.provider, nodes, hours, write_s, rate_override, offer.spot_price_per_hour,
                        offer.price_per_hour, spec.deadline_hours)


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


def _regions(group: tuple[Offer, ...]) -> list[str]:
    """Every region where the same instance is offered at the same price (built only for returned offers)."""
    return list(dict.fromkeys(o.region for o in group if o.region))


def rank_offers(spec: JobSpec, *, db_path: str | Path | None = None, limit: int = 10,
                margin: float = DEFAULT_MEMORY_MARGIN, fx_rates: str | Path | None = None,
                preemption_rate_per_hour: float | None = None) -> RankingResult:
    """Offers for `spec`, ranked by expected total job cost, with alternatives and exclusion counts."""
    if limit < 0:
        raise ValueError("limit must be >= 0")
    if not 0 <= margin < 1:
        raise ValueError("memory margin must be a fraction between 0 and 1")
    workload = build_workload(spec)
    tokens = job_tokens(spec, seq_len=workload.seq_len, total_params=workload.total_params)
    fx_table = load_fx(fx_rates) if spec.budget and spec.budget.currency != "USD" else None
    budget, fx_used = _budget_usd(spec, fx_table)
    path = Path(db_path).expanduser() if db_path else ensure_db()
    if not path.is_file():
        raise ValueError(f"catalog database not found: {path} (run `gpu-advisor catalog build`)")

    max_gpus = max(spec.num_gpus or 8, 8)
    floor = _vram_floor(workload, max_gpus, margin)
    wished = _cached_groups(str(path), path.stat().st_mtime, spec.gpu, tuple(spec.providers or ()) or None,
                            tuple(spec.regions or ()) or None)
    considered = sum(len(group) for group, _ in wished)
    groups = [(g, shape) for g, shape in wished if g[0].vram_gib_per_gpu is not None and g[0].vram_gib_per_gpu >= floor]
    excluded: Counter[str] = Counter()
    if considered > sum(len(group) for group, _ in groups):
        excluded["too_little_vram"] = considered - sum(len(group) for group, _ in groups)

    evaluations: dict[_Shape, _Evaluation] = {}
    eligible: list[_Costed] = []
    fitting: list[_Costed] = []
    allow_spot = spec.interruptible_ok is not False
    groups_of: dict[int, tuple[Offer, ...]] = {}
    for group, single_shape in groups:
        offer, copies = group[0], len(group)
        nodes = _nodes_for(offer, spec.num_gpus)
        if nodes is None:
            excluded["gpu_count_mismatch"] += copies
            continue
        shape = single_shape if nodes == 1 else _shape(offer, nodes)
        if shape not in evaluations:
            evaluations[shape] = _evaluate(shape, workload, tokens, margin)
        evaluation = evaluations[shape]
        topology, time = evaluation.topology, evaluation.time
        if topology is None or not topology.runnable:
            excluded["needs_nvlink_node" if topology and topology.verdict == "needs_nvlink_node"
                     else "does_not_fit"] += copies
            continue
        if time is None:
            excluded["no_speed_data"] += copies
            continue
        ranked = _cost(offer, nodes, topology, time, workload, spec, allow_spot, budget, preemption_rate_per_hour)
        if ranked is None:
            excluded["spot_only_offer" if offer.spot_price_per_hour else "no_price"] += copies
            continue
        groups_of[id(ranked)] = group
        fitting.append(ranked)
        if ranked.meets_budget is False:
            excluded["over_budget"] += copies
        elif ranked.meets_deadline is False:
            excluded["misses_deadline"] += copies
        else:
            eligible.append(ranked)

    eligible.sort(key=lambda r: (r.cost, r.hours))
    top, distinct = eligible[:limit], len(eligible)
    cheapest = min(fitting, key=lambda r: (r.cost, r.hours), default=None)
    fastest = min(fitting, key=lambda r: (r.hours, r.cost), default=None)
    meta = read_meta(path)
    assumptions = list(dict.fromkeys([
        *tokens.assumptions, *workload.assumptions,
        f"fits means per-GPU estimate <= {1 - margin:.0%} of the offer's memory",
        "spot is chosen when allowed and its expected cost is lower and the deadline is met with 90 % probability",
        f"checkpoints written and reloaded at {CHECKPOINT_WRITE_GBS:g} GB/s; spot restart {RESTART_BASE_S:g} s plus "
        "the reload",
        "prices are the catalog snapshot's, in USD per instance-hour",
    ]))
    if fx_used:
        assumptions.append(f"budget converted at 1 {fx_used.from_currency} = {fx_used.rate:.6g} USD "
                           f"({fx_used.date}, {fx_used.source})")
    return RankingResult(
        offers=[_build(item, spec, budget, fx_used, _regions(groups_of[id(item)])) for item in top], total_eligible=distinct,
        cheapest_that_fits=_build(cheapest, spec, budget, fx_used, _regions(groups_of[id(cheapest)])) if cheapest else None,
        fastest=_build(fastest, spec, budget, fx_used, _regions(groups_of[id(fastest)])) if fastest else None,
        excluded=dict(excluded), considered=considered, budget_usd=budget, fx=fx_used,
        deadline_hours=spec.deadline_hours, memory_margin=margin, model_id=workload.arch.id, method=workload.method,
        tokens=tokens.total, catalog={k: meta.get(k) for k in ("source", "snapshot_date", "built_from")},
        assumptions=assumptions)


def _cost(offer: Offer, nodes: int, topology: TopologyResult, time: JobTime, workload: Workload, spec: JobSpec,
          allow_spot: bool, budget: float | None, rate_override: float | None) -> _Costed | None:
    """Cost the job on one offer, choosing spot or on-demand; None when no allowed price exists."""
    hours = time.hours
    spot = None
    if allow_spot and offer.spot_price_per_hour:
        spot = _spot_for(offer, nodes, hours, workload, spec, rate_override)
    use_spot = spot is not None and spot.verdict == "spot"
    if spec.interruptible_ok and spot is not None and offer.price_per_hour is None:
        use_spot = spot.expected_spot_cost_usd is not None and spot.expected_spot_cost_usd < float("inf")
    if use_spot:
        assert spot is not None and spot.expected_spot_cost_usd is not None
        cost, est_hours, billed = spot.expected_spot_cost_usd, spot.expected_spot_hours, \
            spot.expected_spot_billed_hours
        price = offer.spot_price_per_hour * nodes  # type: ignore[operator]
        p_done = spot.p_spot_done_by_deadline
    elif offer.price_per_hour is not None:
        billing, _ = billing_for(offer.provider)
        run = run_cost(hours, offer.price_per_hour, billing, instances=nodes)
        cost, est_hours, billed, price = run.cost_usd, hours, run.billed_hours, offer.price_per_hour * nodes
        p_done = (1.0 if hours <= spec.deadline_hours else 0.0) if spec.deadline_hours else None
    else:
        return None
    deadline_ok = None
    if spec.deadline_hours is not None:
        deadline_ok = (p_done or 0.0) >= (spot.deadline_confidence if use_spot and spot else 1.0)
    return _Costed(offer=offer, nodes=nodes, topology=topology, time=time, spot=spot, use_spot=use_spot, cost=cost,
                   hours=est_hours, billed_hours=billed, price=price, p_done=p_done,
                   meets_budget=(cost <= budget) if budget is not None else None, meets_deadline=deadline_ok)


def _build(item: _Costed, spec: JobSpec, budget: float | None, fx_used: FxUsed | None,
           regions: list[str] | None = None) -> RankedOffer:
    """The full, explained entry for one costed offer."""
    offer, topology, spot = item.offer, item.topology, item.spot
    billing, billing_note = billing_for(offer.provider)
    reasons = _reasons(topology, item.time, spot, item.use_spot, item.cost, item.hours, budget, spec.deadline_hours)
    reasons.append(Reason(code="billing", text=billing_note, params={"granularity_s": billing.granularity_s,
                                                                    "minimum_s": billing.minimum_s}))
    return RankedOffer(
        provider=offer.provider, instance_type=offer.instance_type, gpu=offer.gpu,
        gpu_form_factor=offer.gpu_form_factor, gpu_count=offer.gpu_count, nodes=item.nodes,
        total_gpus=offer.gpu_count * item.nodes, vram_gib_per_gpu=offer.vram_gib_per_gpu, region=offer.region,
        regions=regions or ([offer.region] if offer.region else []), spot=item.use_spot,
        price_per_hour=item.price, on_demand_price_per_hour=offer.price_per_hour,
        spot_price_per_hour=offer.spot_price_per_hour, est_hours=item.hours, est_cost=item.cost,
        est_cost_budget_currency=item.cost / fx_used.rate if fx_used else None, billed_hours=item.billed_hours,
        fits=True, per_gpu_gib=topology.per_gpu_gib, layout=topology.layout, topology_verdict=topology.verdict,
        topology_params=topology.params, exposed_comm_share=topology.exposed_comm_share,
        spot_verdict=spot.verdict if spot else None, spot_savings_usd=spot.savings_usd if spot else None,
        p_done_by_deadline=item.p_done, meets_budget=item.meets_budget, meets_deadline=item.meets_deadline,
        reasons=reasons)


def clear_cache() -> None:
    """Forget cached catalog queries (tests and long-running processes after a catalog rebuild)."""
    _cached_groups.cache_clear()
    _spot_cached.cache_clear()
    _TOPOLOGY_CACHE.clear()


