"""Sizing beyond one node, and what to say when nothing qualifies.

A job with a deadline that one node cannot meet is planned on N identical 8-GPU (or larger) nodes, N from the
single-node time, re-checked with the fabric's communication; a job too big for one node's memory is planned on the
fewest nodes, up to MAX_NODES, whose memory holds it. Offers are prefiltered by a memory floor that is a lower bound
on every layout: every sharding and every tensor-parallel degree the model's heads allow, on the most GPUs a plan can
have. When no offer qualifies, the binding limit is named: memory (no layout holds it), compute (even the largest plan
misses the deadline), budget (plans that meet the deadline cost more) or availability (wishes/prices exclude all).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from functools import partial
from typing import Any, Protocol

from tools.memory import EstimateRequest, Setup, build_setup, degrees_fit, layout_gib, resolve_arch, vram_for

MULTI_NODE_MIN_GPUS = 8
"""Multi-node layouts are built only from full 8-GPU (or larger) instances."""
MAX_NODES = 32
"""Largest cluster planned from catalog offers: 32 nodes (256 GPUs at 8 per node); beyond it capacity needs a
reservation (planning assumption)."""
FLOOR_SHARDINGS = ("none", "ddp", "zero1", "zero2", "zero3", "fsdp")
"""Every sharding the estimator knows: the memory floor is the least of them all."""
DEADLINE_HEADROOM = 1.1
"""Nodes are sized for 10 % more speed than the deadline needs (communication grows with nodes, and job-time
estimates err: evals/throughput's held-out rows reach 1.2x); a plan that needs more than deadline / 1.1 has no
margin, so one node that does is also planned on more nodes, and the headline prefers plans with margin."""


def has_margin(hours: float, deadline_hours: float | None) -> bool:
    """True when a plan finishes within the deadline with DEADLINE_HEADROOM to spare (or there is no deadline)."""
    return deadline_hours is None or hours * DEADLINE_HEADROOM <= deadline_hours


MEMORY_EXCLUSIONS = ("too_little_vram", "does_not_fit", "needs_nvlink_node")


LayoutMemory = Callable[[int, str, int], float | None]
"""Per-GPU GiB of one setup at micro-batch 1 on (GPUs, sharding, tensor-parallel degree); None where the model cannot
be split that way."""


def memory_floor_gib(
    request: EstimateRequest,
    max_gpus: int,
    max_tp: int,
    memory: LayoutMemory | None = None,
    *,
    enough: float = -math.inf,
) -> float:
    """Least per-GPU GiB of any layout on up to `max_gpus` GPUs: every sharding, every tensor-parallel degree up to
    `max_tp` that the estimator accepts for the model's heads, each on the largest GPU count it divides (memory per
    GPU never grows with more GPUs); 0.0 when no layout can be estimated. Each figure is the estimate's per-GPU
    GiB (layout_gib on the request's setup: the same arithmetic without the breakdown, fit search or a new request
    per layout), or `memory`'s, the same figures of the same setup answered from a workload's memo
    (tools.jobtime.layout_memory); a GPU the estimator does not know makes every estimate refuse, as it did.
    `enough`: the first figure at most this is returned as it is (the least is then at most that too, and a caller
    that only compares the floor with `enough` needs no more: no further layout is asked)."""
    try:
        vram_for(request)
        base = build_setup(request.model_copy(update={"tensor_parallel": 1}), resolve_arch(request))
    except ValueError:
        return 0.0
    if memory is None:
        memory = partial(_layout_gib, base)
    best = math.inf
    for tp in range(1, max(1, min(max_tp, max_gpus)) + 1):
        if not degrees_fit(base.arch, tp, base.pp):  # every sharding of this degree would be refused
            continue
        gpus = max_gpus - max_gpus % tp
        for sharding in FLOOR_SHARDINGS:
            value = memory(gpus, sharding, tp)
            if value is not None:  # None: e.g. a degree that does not divide the heads
                best = min(best, value)
                if best <= enough:
                    return best
    return 0.0 if best == math.inf else best


def _layout_gib(base: Setup, gpus: int, sharding: str, tp: int) -> float | None:
    """layout_gib of `base` on a layout at its own checkpointing and micro-batch; None where it refuses the layout."""
    try:
        return layout_gib(base, gpus=gpus, sharding=sharding, tp=tp, checkpointing=base.checkpointing, batch=base.batch)
    except ValueError:
        return None


def fewest_nodes(fits: Callable[[int], bool], max_nodes: int = MAX_NODES) -> int | None:
    """Fewest nodes in [2, max_nodes] on which `fits` holds, by bisection (memory per GPU falls as nodes are
    added); None when even `max_nodes` do not hold the job."""
    steps = node_bisection(max_nodes)
    try:
        count = next(steps)
        while True:
            count = steps.send(fits(count))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def node_bisection(max_nodes: int = MAX_NODES) -> Generator[int, bool, int | None]:
    """fewest_nodes' search as a generator: it yields each node count to try, is sent whether that count holds the
    job, and returns the fewest that does (None when even `max_nodes` do not), so that many candidates' searches can
    run in step (tools.ranking.plans.prefill_scale_out)."""
    low = 2
    if (yield low):
        return low
    if max_nodes <= low or not (yield max_nodes):
        return None
    high = max_nodes  # fits(high), not fits(low)
    while high - low > 1:
        mid = (low + high) // 2
        if (yield mid):
            high = mid
        else:
            low = mid
    return high


def deadline_nodes(single_node_hours: float, deadline_hours: float, gpus_per_node: int) -> int | None:
    """Nodes to try so the job meets the deadline with margin, or None when one node does or the offer cannot scale
    out."""
    if gpus_per_node < MULTI_NODE_MIN_GPUS or deadline_hours <= 0 or has_margin(single_node_hours, deadline_hours):
        return None
    if not math.isfinite(single_node_hours / deadline_hours):  # a job that never ends on one node: try the most
        return MAX_NODES
    return min(MAX_NODES, max(2, math.ceil(single_node_hours / deadline_hours * DEADLINE_HEADROOM)))


def rescale_nodes(nodes: int, hours: float, deadline_hours: float) -> int | None:
    """A second, larger try when `nodes` still miss the deadline or meet it without margin (None when they have the
    margin, or are already at the cap)."""
    if has_margin(hours, deadline_hours) or nodes >= MAX_NODES:
        return None
    return min(MAX_NODES, max(nodes + 1, math.ceil(nodes * hours / deadline_hours * DEADLINE_HEADROOM)))


class Costed(Protocol):
    """What the binding-limit logic reads from a costed plan (tools.ranking.rank)."""

    cost: float
    hours: float
    nodes: int
    meets_deadline: bool | None
    meets_budget: bool | None

    @property
    def total_gpus(self) -> int: ...


def binding_limit(
    fitting: list[Any], excluded: dict[str, int], budget_usd: float | None, deadline_hours: float | None
) -> tuple[str | None, dict[str, Any]]:
    """The limit that leaves no offer, with the numbers behind it; (None, {}) when some offer qualifies."""
    if not fitting:
        memory = sum(excluded.get(code, 0) for code in MEMORY_EXCLUSIONS)
        if memory:
            return "memory", {"offers_too_small": memory}
        return "availability", {"excluded": dict(excluded)}
    if any(c.meets_budget is not False and c.meets_deadline is not False for c in fitting):
        return None, {}
    in_time = [c for c in fitting if c.meets_deadline is not False]
    floor = min(fitting, key=lambda c: c.cost)
    if budget_usd is not None and floor.cost > budget_usd:
        # More nodes do not make a job cheaper: a cost floor above the budget binds whatever the deadline.
        return "budget", {
            "budget_usd": round(budget_usd, 2),
            "min_cost_usd": round(floor.cost, 2),
            "hours": round(floor.hours, 2),
            "gpus": floor.total_gpus,
            "nodes": floor.nodes,
            "deadline_met": bool(in_time),
        }
    if not in_time:
        fastest = min(fitting, key=lambda c: c.hours)
        return "compute", {
            "deadline_hours": deadline_hours,
            "fastest_hours": round(fastest.hours, 2),
            "fastest_gpus": fastest.total_gpus,
            "fastest_nodes": fastest.nodes,
            "gpu_hours": round(fastest.hours * fastest.total_gpus, 1),
            "max_nodes": MAX_NODES,
            "cost_usd": round(fastest.cost, 2),
        }
    cheapest = min(in_time, key=lambda c: c.cost)
    return "budget", {
        "budget_usd": round(budget_usd, 2) if budget_usd is not None else None,
        "min_cost_usd": round(cheapest.cost, 2),
        "hours": round(cheapest.hours, 2),
        "gpus": cheapest.total_gpus,
        "nodes": cheapest.nodes,
    }
