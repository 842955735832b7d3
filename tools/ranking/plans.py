"""The plans of every candidate offer for one job: which node counts, spot or on-demand, hours and cost. Only
`meets_budget` depends on the budget (a comparison), so a ranking asked again with another budget (a what-if) reuses
them from a small LRU and applies its own budget to each plan; a ranking of the same job at a wished GPU count
reuses the one-node plans of the offers that give that count."""

from __future__ import annotations

from collections import Counter
from collections.abc import Generator, Iterator
from typing import Any, NamedTuple

import numpy as np

from tools.catalog import Offer, OfferGroup, Shape, shape_of, verdict_holds
from tools.indices import distinct
from tools.jobtime import Assessment, JobTime
from tools.lru import Lru
from tools.ranking.batch_costing import cost_first_plans
from tools.ranking.costing import Costed, ShapeCosts, ShapeEntry, cost_offer
from tools.ranking.scale_out import (
    MULTI_NODE_MIN_GPUS,
    deadline_nodes,
    fewest_nodes,
    has_margin,
    node_bisection,
    rescale_nodes,
)
from tools.ranking.selection import Item, Selection

PLANS_KEPT = 8
"""Plans of the last jobs ranked (each ~1,100 plans): a budget what-if usually follows its job."""


class MultiNode(NamedTuple):
    """A candidate planned on one node and, where needed, on several: its plans, or why it has none."""

    plans: list[Costed]
    why: str | None


Outcome = Costed | str | MultiNode
"""One candidate's plans: its one-node plan, the reason it has none (one node), or its multi-node plans."""


class Planned(NamedTuple):
    """Every candidate's outcome for a job (in the candidates' order), the budget (USD) their meets_budget was set
    for, the shapes they were costed with, the candidates, and the one-node outcome of each candidate planned on
    several nodes (by place): with the one-node outcomes, what a ranking of the same job at a wished GPU count reuses
    (`one_node_of`)."""

    outcomes: list[Outcome]
    budget: float | None
    shapes: dict[Shape, ShapeEntry]
    groups: tuple[Item, ...]
    firsts: dict[int, Costed | str]
    places: dict[int, int]
    """Each candidate's place by identity, filled on first use (`one_node_of`)."""


_KEPT: Lru[tuple[Any, ...], Planned] = Lru(PLANS_KEPT)


def nodes_for(offer: Offer, wanted_gpus: int | None) -> int | None:
    """Instances of `offer` that give the wanted GPU count; None when the count cannot be met with it."""
    if wanted_gpus is None or wanted_gpus == offer.gpu_count:
        return 1
    if wanted_gpus > offer.gpu_count and offer.gpu_count >= MULTI_NODE_MIN_GPUS and wanted_gpus % offer.gpu_count == 0:
        return wanted_gpus // offer.gpu_count
    return None


def makes_count(gpus: np.ndarray, wanted: int) -> np.ndarray:
    """nodes_for over an array of instance GPU counts: whether each can make the wanted count."""
    stacked: np.ndarray = (gpus >= MULTI_NODE_MIN_GPUS) & (wanted > gpus) & (wanted % np.maximum(gpus, 1) == 0)
    makes: np.ndarray = np.logical_or(gpus == wanted, stacked)
    return makes


def plan_shape(group: OfferGroup, shape: Shape, nodes: int, memo: ShapeCosts) -> tuple[Costed | None, str | None]:
    """Cost one offer rented `nodes` times: (costed, None) or (None, exclusion code)."""
    if nodes != shape.nodes:
        shape = shape_of(group.offer, nodes)
    found = _costable(shape, memo)
    if isinstance(found, str):
        return None, found
    costed = cost_offer(group, nodes, *found, memo)
    if costed is None:
        return None, _unpriced(group)
    return costed, None


def plans_for_group(
    group: OfferGroup, shape: Shape, memo: ShapeCosts, first: tuple[Costed | None, str | None] | None = None
) -> tuple[list[Costed], str | None]:
    """The offer on the wished GPU count, else on one node plus, where needed, on several nodes (for memory that
    one node lacks, or for a deadline one node cannot meet); `first`: its plan_shape on one node when known."""
    offer, job = group.offer, memo.job
    nodes = nodes_for(offer, job.spec.num_gpus)
    if nodes is None:
        return [], "gpu_count_mismatch"
    costed, why = first if first is not None and nodes == 1 else plan_shape(group, shape, nodes, memo)
    if job.spec.num_gpus is not None or offer.gpu_count < MULTI_NODE_MIN_GPUS:
        return ([costed] if costed else []), why
    if costed is None and why == "does_not_fit":
        tried: dict[int, tuple[Costed | None, str | None]] = {}

        def holds(count: int) -> bool:
            """Whether `count` nodes hold the job in memory (as prefill_scale_out found, else from its plan, kept)."""
            known = memo.job.held.get(shape_of(offer, count))
            if known is not None:
                return known
            tried[count] = plan_shape(group, shape, count, memo)
            return tried[count][1] != "does_not_fit"

        count = fewest_nodes(holds)
        if count is not None:
            costed, why = tried[count] if count in tried else plan_shape(group, shape, count, memo)
    plans = [costed] if costed else []
    deadline = job.spec.deadline_hours
    if costed is not None and deadline is not None and not has_margin(costed.hours, deadline):
        # node-hours stay about the same as nodes are added: size from the plan's node count and hours
        count = deadline_nodes(costed.hours * costed.nodes, deadline, offer.gpu_count)
        for _ in range(2):
            if count is None or count <= costed.nodes:
                break
            bigger, _why = plan_shape(group, shape, count, memo)
            if bigger is None:
                break
            plans.append(bigger)
            count = rescale_nodes(count, bigger.hours, deadline)
    return plans, (None if plans else why)


def _wished_shapes(items: tuple[Item, ...], places: list[int], wanted: int) -> Iterator[Shape]:
    """The shapes of the candidates at `places` on the nodes that give the wished GPU count (where any do)."""
    for place in places:
        offer = items[place][0].offer
        nodes = nodes_for(offer, wanted)
        if nodes is not None:
            yield shape_of(offer, nodes)


def prefill_scale_out(groups: tuple[Item, ...], memo: ShapeCosts) -> None:
    """Find the node counts plans_for_group's fewest_nodes will settle on, for every candidate whose one node cannot
    hold the job, their bisections run in step: each step asks only whether memory holds the job on its shapes, all
    at once (ShapeCosts.check_holds, no layout timed), and the counts found are then searched at once, geometry by
    geometry (what plan_shape then finds). Only without a wished GPU count, as there."""
    if memo.job.spec.num_gpus is not None:
        return
    verdicts, held = memo.job.verdicts, memo.job.held
    live: list[tuple[Offer, Generator[int, bool, int | None], int]] = []
    for group, shape, gpus in groups:
        if gpus >= MULTI_NODE_MIN_GPUS and not verdict_holds(verdicts.get(shape)):
            steps = node_bisection()
            live.append((group.offer, steps, next(steps)))
    found: list[Shape] = []
    while live:
        shapes = [shape_of(offer, count) for offer, _steps, count in live]
        memo.check_holds(shapes)
        stepped = []
        for (offer, steps, _count), shape in zip(live, shapes, strict=True):
            try:
                stepped.append((offer, steps, steps.send(held[shape])))
            except StopIteration as done:  # its search is over: the fewest nodes are known
                if done.value is not None:
                    found.append(shape_of(offer, done.value))
        live = stepped
    memo.prefill(found)


def plan_candidates(
    key: tuple[Any, ...],
    selection: Selection,
    memo: ShapeCosts,
    unwished: tuple[Any, ...] | None = None,
) -> Planned:
    """Every candidate's plans costed with `memo`, kept under `key` (the job without its budget, the catalog version
    and the candidates) for the next ranking that differs only in budget. `unwished`: the key of the same job
    without its wished GPU count; when that ranking was made, an offer whose one node gives the count keeps the plan
    it made of it (the same shape, provider and price: the same plan), set for this budget."""
    found = _KEPT.get(key)
    if found is not None:
        return found
    items, shape_at = selection.items, selection.shape_at
    wanted = memo.job.spec.num_gpus
    earlier = _KEPT.get(unwished) if unwished is not None and wanted is not None else None
    # costed first on their one node: every candidate without a wished count (those of several GPUs are then
    # planned on more nodes where needed), else those whose one node gives the count (the rest need several nodes;
    # the selection holds no candidate that cannot make the count)
    one_node = np.ones(len(items), dtype=bool) if wanted is None else selection.gpus == wanted
    several = selection.gpus >= MULTI_NODE_MIN_GPUS if wanted is None else ~one_node
    first = one_node.copy()
    outcomes: list[Outcome | None] = [None] * len(items)
    if earlier is not None:
        for place in np.flatnonzero(first).tolist():
            known = one_node_of(earlier, items[place])
            if known is not None:  # planned on its one node by the job's ranking without the count
                outcomes[place] = known if isinstance(known, str) else _for_budget(known, memo.job.budget)
                first[place] = False
    needed = distinct(shape_at[first], len(selection.shapes))
    shapes = [selection.shapes[index] for index in needed]
    if wanted is None:
        memo.prefill(shapes)
        prefill_scale_out(items, memo)
    else:  # with the shapes of the wished count on several nodes, searched at once
        memo.prefill([*shapes, *_wished_shapes(items, np.flatnonzero(several).tolist(), wanted)])
    per_shape: list[tuple[ShapeEntry, Assessment, JobTime] | str | None] = [None] * len(selection.shapes)
    for index, entry in zip(needed, memo.entries([selection.shapes[index] for index in needed]), strict=True):
        per_shape[index] = _costable_entry(entry)
    costable = np.array([not isinstance(outcome, str) for outcome in per_shape], dtype=bool)[shape_at] & first
    for place in np.flatnonzero(first & ~costable).tolist():
        outcomes[place] = per_shape[shape_at[place]]
    at = np.flatnonzero(costable)
    for place, costed in zip(at.tolist(), cost_first_plans(selection, at, per_shape, memo), strict=True):
        outcomes[place] = costed if costed is not None else _unpriced(items[place][0])
    firsts: dict[int, Costed | str] = {}
    for place in np.flatnonzero(several).tolist():
        group, single_shape, _gpus = items[place]
        if wanted is None:  # more nodes where needed, now that its one node is costed
            one = firsts[place] = outcomes[place]  # type: ignore[assignment]  # filled above
            plan = (one, None) if isinstance(one, Costed) else (None, one)
            outcomes[place] = MultiNode(*plans_for_group(group, single_shape, memo, plan))  # type: ignore[arg-type]
        else:  # its GPUs make the count on several nodes (the selection keeps no other)
            outcomes[place] = MultiNode(*plans_for_group(group, single_shape, memo))
    planned = Planned(outcomes, memo.job.budget, memo.shapes, items, firsts, {})  # type: ignore[arg-type]
    return _KEPT.put(key, planned)


def one_node_of(planned: Planned, item: Item) -> Costed | str | None:
    """The one-node outcome `planned` has of a candidate (its plan, or why it has none); None when it has none of
    that candidate on one node (not among its candidates, or costed only on several nodes)."""
    if not planned.places:
        planned.places.update(zip(map(id, planned.groups), range(len(planned.groups))))
    place = planned.places.get(id(item))
    if place is None or planned.groups[place] is not item:  # identity: the shared candidate tuples
        return None
    outcome = planned.outcomes[place]
    if isinstance(outcome, MultiNode):
        return planned.firsts.get(place)
    return outcome


def _costable(shape: Shape, memo: ShapeCosts) -> tuple[ShapeEntry, Assessment, JobTime] | str:
    """A shape's entry, verdict and time where its offers can be costed, else why not (what plan_shape checks; the
    one-node candidates look it up once per shape: ~1,000 of them share ~280 shapes)."""
    return _costable_entry(memo.shapes.get(shape) or memo.entry(shape))


def _costable_entry(entry: ShapeEntry) -> tuple[ShapeEntry, Assessment, JobTime] | str:
    """_costable of a shape's entry."""
    topology, time = entry.evaluation.topology, entry.evaluation.time
    if topology is None or not topology.runnable:
        return "needs_nvlink_node" if topology and topology.verdict == "needs_nvlink_node" else "does_not_fit"
    if time is None:
        return "no_speed_data"
    return entry, topology, time


def _unpriced(group: OfferGroup) -> str:
    """Why an offer that fits has no plan: only an interruptible price where spot is not allowed, or no price."""
    return "spot_only_offer" if group.interruptible else "no_price"


def within_budget(
    planned: Planned, groups: tuple[Item, ...], budget: float | None, excluded: Counter[str]
) -> tuple[list[Costed], list[Costed]]:
    """(eligible plans, every plan that fits) under `budget` (USD; None: no budget) of the candidates `planned` was
    made for, each plan's meets_budget set as cost_offer sets it (plans made for another budget are copied where it
    differs); exclusions counted per catalog row."""
    eligible: list[Costed] = []
    fitting: list[Costed] = []
    same = budget == planned.budget
    for (group, _shape, _gpus), outcome in zip(groups, planned.outcomes, strict=True):
        if isinstance(outcome, str):
            excluded[outcome] += group.count
            continue
        if not isinstance(outcome, MultiNode):
            costed = outcome if same else _for_budget(outcome, budget)
            fitting.append(costed)
            if costed.meets_budget is not False and costed.meets_deadline is not False:
                eligible.append(costed)
            else:
                excluded["over_budget" if costed.meets_deadline is not False else "misses_deadline"] += group.count
            continue
        found, why = outcome
        if why is not None:
            excluded[why] += group.count
            continue
        plans = found if same else [_for_budget(c, budget) for c in found]
        fitting.extend(plans)
        ok = [c for c in plans if c.meets_budget is not False and c.meets_deadline is not False]
        if ok:
            eligible.extend(ok)
        elif any(c.meets_budget is False for c in plans if c.meets_deadline is not False):
            excluded["over_budget"] += group.count
        elif plans[-1].meets_deadline is False:
            excluded["misses_deadline"] += group.count
        else:
            excluded["over_budget"] += group.count
    return eligible, fitting


def within_caps(planned: Planned, max_gpus: int | None, max_nodes: int | None) -> Planned:
    """The plans that use at most `max_gpus` GPUs on at most `max_nodes` nodes (None: no cap); a candidate left with
    none is excluded as 'over_gpu_cap'."""
    if max_gpus is None and max_nodes is None:
        return planned

    def allowed(plan: Costed) -> bool:
        """Whether one plan keeps within the caps."""
        return (max_nodes is None or plan.nodes <= max_nodes) and (max_gpus is None or plan.total_gpus <= max_gpus)

    outcomes: list[Outcome] = []
    for outcome in planned.outcomes:
        if isinstance(outcome, MultiNode):
            kept = [plan for plan in outcome.plans if allowed(plan)]
            outcomes.append(MultiNode(kept, outcome.why if kept or not outcome.plans else "over_gpu_cap"))
        elif isinstance(outcome, str) or allowed(outcome):
            outcomes.append(outcome)
        else:
            outcomes.append("over_gpu_cap")
    return planned._replace(outcomes=outcomes)


def _for_budget(plan: Costed, budget: float | None) -> Costed:
    """The plan with meets_budget for `budget` (itself when that is what it says)."""
    meets = (plan.cost <= budget) if budget is not None else None
    return plan if plan.meets_budget is meets else plan._replace(meets_budget=meets)


def clear_plans() -> None:
    """Forget the kept plans."""
    _KEPT.clear()
