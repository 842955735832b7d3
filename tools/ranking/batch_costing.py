"""The first plan of every candidate costed as columns: one node of each offer, spot or on-demand, at once (issue 27).

A ranking costs ~1,000 offers that share ~280 shapes and ~450 (shape, provider) pairs. What does not depend on the
price (the spot run model, on-demand hours and billed hours) is looked up once per pair; the choice between spot and
on-demand, the cost, hours and billed hours are then array operations over the offers, with the same float operations
in the same order as `tools.ranking.costing.cost_offer`, which stays the reference (and costs the plans on several
nodes): tests/test_batch_costing.py checks that both give the same plans, bit for bit. The offers' prices, shapes and
pairs are columns of their Selection (tools.ranking.selection), shared by the jobs that keep the same candidates.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from tools.indices import distinct
from tools.jobtime import Assessment, JobTime
from tools.ranking.costing import Costed, ShapeCosts, ShapeEntry, SpotRun
from tools.ranking.selection import Selection
from tools.spot import DEFAULT_DEADLINE_CONFIDENCE, HOUR, billed_seconds_array

Costable = tuple[ShapeEntry, Assessment, JobTime]
"""A shape that holds the job on one node and has a time: its entry, verdict and time."""
PerShape = Sequence[Costable | str | None]
"""Per shape of a Selection: costable, why not, or None (not asked)."""


class _Columns(NamedTuple):
    """Per offer: its (shape, provider) pair, whether spot was assessed, the plan chosen, and its figures."""

    pair: list[int]
    assessed: list[bool]
    spot: list[bool]
    on_demand: list[bool]
    cost: list[float]
    hours: list[float]
    billed: list[float]
    price: list[float]


def cost_first_plans(
    selection: Selection, at: np.ndarray, per_shape: PerShape, memo: ShapeCosts
) -> list[Costed | None]:
    """cost_offer(group, 1, entry, topology, time, memo) for the selection's items at positions `at` (ascending),
    whose shapes are costable in `per_shape`, in order: the same Costed, or None where no allowed price exists."""
    if not len(at):
        return []
    spot_runs = _spot_runs(selection, at, per_shape, memo)
    columns = _columns(selection, at, per_shape, spot_runs, memo)
    return _assembled(selection, at, per_shape, columns, spot_runs, memo)


def _pair_figures(selection: Selection, pair: int, per_shape: PerShape) -> tuple[ShapeEntry, str, JobTime]:
    """A pair's shape entry, provider and time."""
    shape, provider = selection.pairs[pair]
    entry, _topology, time = _figures_of(per_shape, shape)
    return entry, provider, time


def _figures_of(per_shape: PerShape, shape: int) -> Costable:
    """The entry, verdict and time of a shape known to be costable."""
    found = per_shape[shape]
    assert found is not None and not isinstance(found, str)  # only costable items are costed
    return found


def _spot_runs(selection: Selection, at: np.ndarray, per_shape: PerShape, memo: ShapeCosts) -> dict[int, SpotRun]:
    """The spot run of every pair with an offer at `at` that has an interruptible price, where spot is allowed."""
    if memo.job.spec.interruptible_ok is False:
        return {}
    price = selection.interruptible[at]
    runs = {}
    for pair in distinct(selection.pair_at[at][~np.isnan(price) & (price != 0.0)], len(selection.pairs)):
        entry, provider, time = _pair_figures(selection, pair, per_shape)
        runs[pair] = memo.spot_run(entry, 1, provider, time)
    return runs


def _columns(
    selection: Selection, at: np.ndarray, per_shape: PerShape, spot_runs: dict[int, SpotRun], memo: ShapeCosts
) -> _Columns:
    """Each offer's plan: price_outcome's spot verdict on its pair's run model, then cost_offer's choice and figures."""
    od, sp, pair = selection.on_demand[at], selection.interruptible[at], selection.pair_at[at]
    has_od = ~np.isnan(od)
    models = {index: run.model for index, run in spot_runs.items() if run.model is not None}
    count, at_model = len(selection.pairs), list(models)
    spot_billed, od_billed_s, mean_s = (np.full(count, math.nan) for _ in range(3))
    unlikely, modelled = np.zeros(count, dtype=bool), np.zeros(count, dtype=bool)
    if models:  # the per-pair figures of the pairs with a spot run model (NaN, False elsewhere)
        spot_billed[at_model] = [model.spot_billed_s for model in models.values()]
        od_billed_s[at_model] = [model.od_billed_s for model in models.values()]
        mean_s[at_model] = [model.completion.mean_s for model in models.values()]
        unlikely[at_model] = [
            model.p_spot is not None and model.p_spot < DEFAULT_DEADLINE_CONFIDENCE for model in models.values()
        ]
        modelled[at_model] = True
    assessed = modelled[pair] & ~np.isnan(sp) & (sp != 0.0)
    spot_cost = sp * spot_billed[pair] / HOUR
    od_cost = od * od_billed_s[pair] / HOUR
    # price_outcome: spot when the run finishes, likely enough by the deadline, and is cheaper (or the only price)
    spot = assessed & np.isfinite(mean_s[pair]) & ~unlikely[pair] & (~(has_od & (od != 0.0)) | (spot_cost < od_cost))
    if memo.job.spec.interruptible_ok:  # cost_offer: spot wanted and no on-demand price at all
        spot = np.where(assessed & ~has_od, spot_cost < math.inf, spot)
    on_demand = ~spot & has_od
    if (od[on_demand] < 0).any():  # run_cost's check, as cost_offer makes it
        raise ValueError("hours and prices must not be negative")
    od_hours, od_billed = _on_demand_runs(selection, distinct(pair[on_demand], len(selection.pairs)), per_shape, memo)
    # cost_offer multiplies prices by the node count: "* 1" keeps its operations (and is exact)
    return _Columns(
        pair=pair.tolist(),
        assessed=assessed.tolist(),
        spot=spot.tolist(),
        on_demand=on_demand.tolist(),
        cost=np.where(spot, spot_cost, od_billed[pair] * od * 1).tolist(),
        hours=np.where(spot, mean_s[pair] / HOUR, od_hours[pair]).tolist(),
        billed=np.where(spot, spot_billed[pair] / HOUR, od_billed[pair]).tolist(),
        price=np.where(spot, sp * 1, od * 1).tolist(),
    )


def _on_demand_runs(
    selection: Selection, wanted: list[int], per_shape: PerShape, memo: ShapeCosts
) -> tuple[np.ndarray, np.ndarray]:
    """Hours and billed hours of an on-demand run on each pair in `wanted` (NaN elsewhere): memo.on_demand_run's
    figures, the billing rounding of all pairs at once."""
    hours = np.full(len(selection.pairs), math.nan)
    for pair in wanted:
        entry, _provider, time = _pair_figures(selection, pair, per_shape)
        hours[pair] = memo.on_demand_hours(entry, 1, time)[1]
    if (hours < 0).any():  # billed_hours' check
        raise ValueError("hours and prices must not be negative")
    return hours, billed_seconds_array(hours * 3600.0, selection.granularity, selection.minimum) / 3600.0


def _assembled(
    selection: Selection,
    at: np.ndarray,
    per_shape: PerShape,
    columns: _Columns,
    spot_runs: dict[int, SpotRun],
    memo: ShapeCosts,
) -> list[Costed | None]:
    """The Costed of each offer from its columns (None where it has neither plan), as cost_offer builds it."""
    job = memo.job
    rate, deadline, budget = job.rate, job.spec.deadline_hours, job.budget
    items, shapes, pairs = selection.items, selection.shape_at[at].tolist(), selection.pairs
    made: list[Costed | None] = []
    make = Costed._make
    for place, shape, pair, assessed, use_spot, on_demand, cost, hours, billed, price in zip(
        at.tolist(), shapes, *columns, strict=True
    ):
        if not use_spot and not on_demand:
            made.append(None)
            continue
        group = items[place][0]
        entry, topology, time = _figures_of(per_shape, shape)
        spot_args = None
        if assessed:
            run = spot_runs[pair]
            spot_args = (
                pairs[pair][1],
                1,
                run.hours,
                run.write_s,
                rate,
                group.interruptible,
                group.on_demand,
                deadline,
            )
        if use_spot:
            run = spot_runs[pair]
            overheads, p_done = run.overheads, run.model.p_spot  # type: ignore[union-attr]
        else:
            overheads = entry.od_overheads  # type: ignore[assignment]  # set by _on_demand_runs for its pair
            p_done = (1.0 if hours <= deadline else 0.0) if deadline else None  # type: ignore[operator]
        deadline_ok = None
        if deadline is not None:
            deadline_ok = (p_done or 0.0) >= (DEFAULT_DEADLINE_CONFIDENCE if use_spot else 1.0)
        made.append(
            make(
                (
                    group.offer,
                    group,
                    1,
                    topology,
                    time,
                    overheads,
                    use_spot,
                    cost,
                    hours,
                    billed,
                    price,
                    p_done,
                    (cost <= budget) if budget is not None else None,
                    deadline_ok,
                    spot_args,
                )
            )
        )
    return made
