"""Cost one job on many offers: spot or on-demand, expected cost, hours, deadline odds (the ranking's inner loop).

What does not depend on an offer's price (overheads, billed hours, the spot run model) depends only on the hardware
shape, the provider and the node count, so it is computed once per (shape, provider) in a ranking and every offer of
that pair is costed with a few multiplications. The explained spot assessment (tools.spot.risk.assess_spot) is built
only for the offers a ranking returns, and gives the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from contract.jobspec import JobSpec
from tools.catalog import (
    Evaluation,
    Offer,
    OfferGroup,
    Shape,
    assess_shapes,
    evaluate,
    evaluate_many,
    held_of,
    memory_holds,
    shape_of,
    verdicts_of,
    workload_key,
)
from tools.jobtime import (
    Assessment,
    JobTime,
    Overheads,
    Tokens,
    Workload,
    billed_hours,
    billing_for,
    checkpoint_bytes,
    job_overheads,
    job_tokens,
    shape_workload,
)
from tools.lru import Lru
from tools.ranking.spot_terms import RESTART_BASE_S, spot_cached, spot_request, spot_terms
from tools.spot import (
    DEFAULT_DEADLINE_CONFIDENCE,
    HOUR,
    RunModel,
    SpotRiskResult,
    price_outcome,
    provider_notice,
    run_model,
)

CHECKPOINT_WRITE_GBS = 1.0
"""Checkpoint write and reload speed to persistent storage, GB/s (planning assumption)."""
MAX_SPOT_HOURS = 1e6
"""Longest job the spot model takes; longer runs are costed on-demand only."""
SPOT_INPUT_MAX_S = 1e6
"""Largest checkpoint write or restart time SpotRiskRequest accepts; beyond it the request's own validation error
is raised, as it always was."""


@dataclass(kw_only=True)
class CostingJob:
    """Everything about the request that costing one offer needs."""

    spec: JobSpec
    workload: Workload
    """The shapes' workload (tools.jobtime.shape_workload: without the spec's GPU count)."""
    tokens: Tokens
    margin: float
    budget: float | None
    rate: float | None
    epoch_tokens: float
    workload_key: str
    checkpoint_write_s: float = 0.0
    """Seconds to write one resumable checkpoint from one node."""
    verdicts: dict[Shape, Assessment | None] = field(init=False)
    """The job's topology verdicts per shape, kept across turns (tools.catalog.verdicts_of)."""
    held: dict[Shape, bool] = field(init=False)
    """Whether memory holds the job per shape, as the scale-out search asked it, kept across turns (held_of)."""

    @classmethod
    def of(cls, spec: JobSpec, *, margin: float, budget: float | None, rate: float | None) -> CostingJob:
        """The costing inputs of `spec`: its workload, tokens, tokens per epoch and the workload's key."""
        workload = shape_workload(spec)
        tokens = job_tokens(spec, seq_len=workload.seq_len, total_params=workload.total_params)
        return cls(
            spec=spec,
            workload=workload,
            tokens=tokens,
            margin=margin,
            budget=budget,
            rate=rate,
            epoch_tokens=tokens.total / (spec.epochs or 1.0),
            workload_key=workload_key(workload),
        )

    def __post_init__(self) -> None:
        """Checkpoint write time and the job's kept topology verdicts, once per ranking."""
        workload = self.workload
        self.verdicts = verdicts_of(self.workload_key, self.margin)
        self.held = held_of(self.workload_key, self.margin)
        self.checkpoint_write_s = checkpoint_bytes(
            workload.total_params, workload.trainable_params, workload.method in ("lora", "qlora")
        ) / (CHECKPOINT_WRITE_GBS * 1e9)


class Costed(NamedTuple):
    """Phase-one numbers for one offer; full RankedOffer objects are built only for what is returned. A named tuple:
    the ranking makes one per offer and plan, with `_make` (a third of a dataclass's cost)."""

    offer: Offer
    group: OfferGroup
    nodes: int
    topology: Assessment
    """The shape's layout search and verdict (`topology.result()` explains it)."""
    time: JobTime
    overheads: Overheads
    use_spot: bool
    cost: float
    hours: float
    billed_hours: float
    price: float
    p_done: float | None
    meets_budget: bool | None
    meets_deadline: bool | None
    spot_args: tuple[Any, ...] | None = None
    """spot_cached's arguments when spot was assessed (the explained result is built on first use)."""

    @property
    def total_gpus(self) -> int:
        """GPUs across all nodes."""
        return self.offer.gpu_count * self.nodes

    @property
    def spot(self) -> SpotRiskResult | None:
        """The explained spot assessment, None when spot was not assessed."""
        return spot_cached(*self.spot_args) if self.spot_args is not None else None


class OnDemandRun(NamedTuple):
    """Price-independent on-demand figures of one (shape, provider)."""

    overheads: Overheads
    hours: float
    billed_hours: float
    """Hours billed per instance under the provider's rule (tools.jobtime.billed_hours)."""


@dataclass(kw_only=True, slots=True)
class SpotRun:
    """Price-independent spot figures of one (shape, provider): None model when the job is too long for it."""

    overheads: Overheads
    hours: float
    write_s: float
    model: RunModel | None


@dataclass(kw_only=True, slots=True)
class ShapeEntry:
    """One shape in one ranking: its evaluation and, per provider, the price-independent run figures."""

    evaluation: Evaluation
    on_demand: dict[str, OnDemandRun] = field(default_factory=dict)
    spot: dict[str, SpotRun] = field(default_factory=dict)
    od_overheads: Overheads | None = None
    """Overheads of an on-demand run (periodic checkpoints); the same for every provider."""
    spot_overheads: Overheads | None = None


SHAPE_ENTRIES_KEPT = 8
"""Jobs whose shape entries are kept (~280 each): the rankings a follow-up makes of its job share them."""
_ENTRIES: Lru[tuple[Any, ...], dict[Shape, ShapeEntry]] = Lru(SHAPE_ENTRIES_KEPT)


def kept_entries(job: CostingJob) -> dict[Shape, ShapeEntry]:
    """The shape entries of every ranking whose entries come out the same: a shape's evaluation and run figures read
    the shapes' workload, tokens, margin, preemption rate and deadline, never the budget, the spot choice, the GPU
    count or provider wished, so "what if spot?", "and with 4 GPUs?" or "only aws" reuse their job's."""
    tokens = job.tokens
    key = (job.workload_key, job.margin, tokens.total, tokens.assumptions, job.epoch_tokens, job.rate)
    return _ENTRIES.get_or_make((*key, job.spec.deadline_hours), dict)


def clear_kept_entries() -> None:
    """Forget the kept shape entries."""
    _ENTRIES.clear()


@dataclass(kw_only=True)
class ShapeCosts:
    """Per-ranking memo: each shape's evaluation and price-independent figures, so that the offers of one shape and
    provider are costed with a few multiplications."""

    job: CostingJob
    shapes: dict[Shape, ShapeEntry] = field(default_factory=dict)

    def entry(self, shape: Shape) -> ShapeEntry:
        """The shape's evaluation (topology and time, tools.catalog.shapes.evaluate) and its figures so far."""
        found = self.shapes.get(shape)
        if found is None:
            job = self.job
            found = self.shapes[shape] = ShapeEntry(
                evaluation=evaluate(shape, job.workload, job.tokens, job.margin, job.verdicts)
            )
        return found

    def entries(self, shapes: list[Shape]) -> list[ShapeEntry]:
        """entry() of each shape, the evaluations of those not in the memo made at once (tools.catalog.evaluate_many)."""
        found, job = self.shapes, self.job
        new = list(dict.fromkeys(shape for shape in shapes if shape not in found))
        for shape, evaluation in zip(
            new, evaluate_many(new, job.workload, job.tokens, job.margin, job.verdicts), strict=True
        ):
            found[shape] = ShapeEntry(evaluation=evaluation)
        return [found[shape] for shape in shapes]

    def prefill(self, shapes: Iterable[Shape]) -> None:
        """Search the topology of every shape at once, geometry by geometry (what `entry` then evaluates)."""
        job = self.job
        assess_shapes((shape for shape in shapes if shape not in self.shapes), job.workload, job.margin, job.verdicts)

    def check_holds(self, shapes: Iterable[Shape]) -> None:
        """Whether memory holds the job on each shape, into the job's `held` (from its verdict, or from per-GPU memory
        where that can tell, without timing the layouts: tools.catalog.memory_holds)."""
        job = self.job
        memory_holds(shapes, job.workload, job.margin, job.verdicts, job.held)

    def _overheads(self, time: JobTime, nodes: int, periodic: bool) -> Overheads:
        """Start, downloads, staging and checkpoint writes of one run of this job on `nodes` nodes."""
        workload = self.job.workload
        return job_overheads(
            train_hours=time.hours,
            total_params=workload.total_params,
            trainable_params=workload.trainable_params,
            method=workload.method,
            dataset_tokens_per_epoch=self.job.epoch_tokens,
            nodes=nodes,
            periodic_checkpoints=periodic,
        )

    def on_demand_hours(self, entry: ShapeEntry, nodes: int, time: JobTime) -> tuple[Overheads, float]:
        """Overheads with periodic checkpoints and hours of an on-demand run of the shape (any provider)."""
        overheads = entry.od_overheads
        if overheads is None:
            overheads = entry.od_overheads = self._overheads(time, nodes, True)
        return overheads, time.hours + overheads.total_s / 3600

    def on_demand_run(self, entry: ShapeEntry, nodes: int, provider: str, time: JobTime) -> OnDemandRun:
        """Overheads with periodic checkpoints, hours and billed hours of an on-demand run."""
        run = entry.on_demand.get(provider)
        if run is None:
            overheads, hours = self.on_demand_hours(entry, nodes, time)
            billed = billed_hours(hours, billing_for(provider)[0])  # the price only scales it
            run = entry.on_demand[provider] = OnDemandRun._make((overheads, hours, billed))
        return run

    def spot_run(self, entry: ShapeEntry, nodes: int, provider: str, time: JobTime) -> SpotRun:
        """Overheads, hours and the spot run model (None past MAX_SPOT_HOURS) of a spot run."""
        run = entry.spot.get(provider)
        if run is None:
            job = self.job
            overheads = entry.spot_overheads
            if overheads is None:
                overheads = entry.spot_overheads = self._overheads(time, nodes, False)
            hours = time.hours + overheads.setup_s / 3600
            write_s = job.checkpoint_write_s / nodes
            model = None
            if hours <= MAX_SPOT_HOURS:
                if write_s + RESTART_BASE_S > SPOT_INPUT_MAX_S:  # beyond the request's bounds: let it say so
                    spot_request(provider, nodes, hours, write_s, job.rate, None, None, job.spec.deadline_hours)
                restart_s, rate_h, billing = spot_terms(provider, nodes, write_s, job.rate)
                model = run_model(
                    max(hours, 1e-6),
                    write_s,
                    restart_s,
                    rate_h,
                    provider_notice(provider),
                    False,
                    billing.granularity_s,
                    billing.minimum_s,
                    job.spec.deadline_hours,
                )
            run = entry.spot[provider] = SpotRun(overheads=overheads, hours=hours, write_s=write_s, model=model)
        return run


def cost_offer(
    group: OfferGroup,
    nodes: int,
    entry: ShapeEntry,
    topology: Assessment,
    time: JobTime,
    memo: ShapeCosts,
    *,
    on_demand_only: bool = False,
) -> Costed | None:
    """Cost the job on one offer rented `nodes` times (`entry`: that shape's), choosing spot or on-demand (only
    on-demand with `on_demand_only`); None when no allowed price exists. Same numbers as assess_spot and run_cost
    (the same operations in the same order)."""
    offer, job = group.offer, memo.job
    spec = job.spec
    on_demand, interruptible = group.on_demand, group.interruptible
    spot_args = spot_run = None
    verdict = spot_cost = None
    if spec.interruptible_ok is not False and interruptible and not on_demand_only:  # spot figures where allowed
        spot_run = memo.spot_run(entry, nodes, offer.provider, time)
        if spot_run.model is not None:
            spot_args = (
                offer.provider,
                nodes,
                spot_run.hours,
                spot_run.write_s,
                job.rate,
                interruptible,
                on_demand,
                spec.deadline_hours,
            )
            verdict, _reason, spot_cost, _od_cost = price_outcome(
                spot_run.model,
                interruptible * nodes,
                on_demand * nodes if on_demand else None,
                DEFAULT_DEADLINE_CONFIDENCE,
            )
    use_spot = verdict == "spot"
    if spec.interruptible_ok and spot_args is not None and on_demand is None:  # (never with on_demand_only)
        use_spot = spot_cost is not None and spot_cost < math.inf
    if use_spot:
        assert spot_run is not None and spot_run.model is not None and spot_cost is not None
        model = spot_run.model
        overheads, cost = spot_run.overheads, spot_cost
        est_hours, billed = model.completion.mean_s / HOUR, model.spot_billed_s / HOUR
        price = interruptible * nodes  # type: ignore[operator]
        p_done = model.p_spot
    elif on_demand is not None:
        run = memo.on_demand_run(entry, nodes, offer.provider, time)
        if on_demand < 0:  # run_cost's check (the billed hours come from it, the price is applied here)
            raise ValueError("hours and prices must not be negative")
        overheads, est_hours, billed = run.overheads, run.hours, run.billed_hours
        cost, price = billed * on_demand * nodes, on_demand * nodes
        p_done = (1.0 if est_hours <= spec.deadline_hours else 0.0) if spec.deadline_hours else None
    else:
        return None
    deadline_ok = None
    if spec.deadline_hours is not None:
        deadline_ok = (p_done or 0.0) >= (DEFAULT_DEADLINE_CONFIDENCE if use_spot else 1.0)
    return Costed._make(
        (
            offer,
            group,
            nodes,
            topology,
            time,
            overheads,
            use_spot,
            cost,
            est_hours,
            billed,
            price,
            p_done,
            (cost <= job.budget) if job.budget is not None else None,
            deadline_ok,
            spot_args,
        )
    )


def on_demand_variant(costed: Costed, memo: ShapeCosts) -> Costed | None:
    """The same offer and node count costed on-demand (itself when it already is; None without an on-demand
    price, e.g. a market price)."""
    if not costed.use_spot:
        return costed
    entry = memo.entry(shape_of(costed.offer, costed.nodes))
    return cost_offer(costed.group, costed.nodes, entry, costed.topology, costed.time, memo, on_demand_only=True)
