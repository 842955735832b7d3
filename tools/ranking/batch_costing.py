"""The first plan of every candidate costed as columns: one node of each offer, spot or on-demand, at once (issue 27).

A ranking costs ~1,000 offers that share ~280 shapes and ~450 (shape, provider) pairs. What does not depend on the
price (the spot run model, on-demand hours and billed hours) is looked up once per pair; the choice between spot and
on-demand, the cost, hours and billed hours are then array operations over the offers, with the same float operations
in the same order as `tools.ranking.costing.cost_offer`, which stays the reference (and costs the plans on several
nodes): tests/test_batch_costing.py checks that both give the same plans, bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from tools.catalog import OfferGroup
from tools.jobtime import Assessment, JobTime, billing_for
from tools.ranking.costing import Costed, ShapeCosts, ShapeEntry, SpotRun
from tools.spot import DEFAULT_DEADLINE_CONFIDENCE, HOUR, billed_seconds_array

Costable = tuple[OfferGroup, ShapeEntry, Assessment, JobTime]
"""An offer whose shape holds the job on one node and has a time: its group, its shape's entry, verdict and time."""


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


def _prices(values: list[float | None]) -> np.ndarray:
    """Prices as floats, NaN where there is none."""
    return np.array([math.nan if value is None else value for value in values], dtype=float)


def _pairs(costable: Sequence[Costable]) -> tuple[list[tuple[ShapeEntry, str, JobTime]], np.ndarray]:
    """The distinct (shape entry, provider) pairs with their time, and each offer's pair."""
    pair_of: dict[tuple[int, str], int] = {}
    pairs: list[tuple[ShapeEntry, str, JobTime]] = []
    index = []
    for group, entry, _topology, time in costable:
        key = (id(entry), group.offer.provider)
        found = pair_of.get(key)
        if found is None:
            found = pair_of[key] = len(pairs)
            pairs.append((entry, key[1], time))
        index.append(found)
    return pairs, np.array(index, dtype=np.intp)


def cost_first_plans(costable: Sequence[Costable], memo: ShapeCosts) -> list[Costed | None]:
    """cost_offer(group, 1, entry, topology, time, memo) for every offer in `costable`, in order: the same Costed,
    or None where no allowed price exists."""
    if not costable:
        return []
    pairs, at = _pairs(costable)
    spot_runs = _spot_runs(costable, pairs, at, memo)
    columns = _columns(costable, pairs, at, spot_runs, memo)
    return _assembled(costable, pairs, columns, spot_runs, memo)


def _spot_runs(
    costable: Sequence[Costable], pairs: list[tuple[ShapeEntry, str, JobTime]], at: np.ndarray, memo: ShapeCosts
) -> dict[int, SpotRun]:
    """The spot run of every pair with an offer that has an interruptible price, where spot is allowed."""
    if memo.job.spec.interruptible_ok is False:
        return {}
    wanted = sorted({pair for pair, (group, *_rest) in zip(at.tolist(), costable, strict=True) if group.interruptible})
    return {pair: memo.spot_run(pairs[pair][0], 1, pairs[pair][1], pairs[pair][2]) for pair in wanted}


def _columns(
    costable: Sequence[Costable],
    pairs: list[tuple[ShapeEntry, str, JobTime]],
    at: np.ndarray,
    spot_runs: dict[int, SpotRun],
    memo: ShapeCosts,
) -> _Columns:
    """Each offer's plan: price_outcome's spot verdict on its pair's run model, then cost_offer's choice and figures."""
    groups = [item[0] for item in costable]
    od, sp = _prices([group.on_demand for group in groups]), _prices([group.interruptible for group in groups])
    has_od = ~np.isnan(od)
    models = {pair: run.model for pair, run in spot_runs.items() if run.model is not None}
    nan, every = math.nan, range(len(pairs))
    spot_billed = np.array([models[p].spot_billed_s if p in models else nan for p in every])
    od_billed_s = np.array([models[p].od_billed_s if p in models else nan for p in every])
    mean_s = np.array([models[p].completion.mean_s if p in models else nan for p in every])
    p_spot = [models[p].p_spot if p in models else None for p in every]
    unlikely = np.array([value is not None and value < DEFAULT_DEADLINE_CONFIDENCE for value in p_spot], dtype=bool)
    modelled = np.array([p in models for p in every], dtype=bool)
    assessed = modelled[at] & ~np.isnan(sp) & (sp != 0.0)
    spot_cost = sp * spot_billed[at] / HOUR
    od_cost = od * od_billed_s[at] / HOUR
    # price_outcome: spot when the run finishes, likely enough by the deadline, and is cheaper (or the only price)
    spot = assessed & np.isfinite(mean_s[at]) & ~unlikely[at] & (~(has_od & (od != 0.0)) | (spot_cost < od_cost))
    if memo.job.spec.interruptible_ok:  # cost_offer: spot wanted and no on-demand price at all
        spot = np.where(assessed & ~has_od, spot_cost < math.inf, spot)
    on_demand = ~spot & has_od
    if (od[on_demand] < 0).any():  # run_cost's check, as cost_offer makes it
        raise ValueError("hours and prices must not be negative")
    od_hours, od_billed = _on_demand_runs(pairs, set(at[on_demand].tolist()), memo)
    # cost_offer multiplies prices by the node count: "* 1" keeps its operations (and is exact)
    return _Columns(
        pair=at.tolist(),
        assessed=assessed.tolist(),
        spot=spot.tolist(),
        on_demand=on_demand.tolist(),
        cost=np.where(spot, spot_cost, od_billed[at] * od * 1).tolist(),
        hours=np.where(spot, mean_s[at] / HOUR, od_hours[at]).tolist(),
        billed=np.where(spot, spot_billed[at] / HOUR, od_billed[at]).tolist(),
        price=np.where(spot, sp * 1, od * 1).tolist(),
    )


def _on_demand_runs(
    pairs: list[tuple[ShapeEntry, str, JobTime]], wanted: set[int], memo: ShapeCosts
) -> tuple[np.ndarray, np.ndarray]:
    """Hours and billed hours of an on-demand run on each pair in `wanted` (NaN elsewhere): memo.on_demand_run's
    figures, the billing rounding of all pairs at once."""
    hours = np.full(len(pairs), math.nan)
    granularity, minimum = np.ones(len(pairs)), np.zeros(len(pairs))
    for pair in wanted:
        entry, provider, time = pairs[pair]
        hours[pair] = memo.on_demand_hours(entry, 1, time)[1]
        billing = billing_for(provider)[0]
        granularity[pair], minimum[pair] = billing.granularity_s, billing.minimum_s
    if (hours < 0).any():  # billed_hours' check
        raise ValueError("hours and prices must not be negative")
    return hours, billed_seconds_array(hours * 3600.0, granularity, minimum) / 3600.0


def _assembled(
    costable: Sequence[Costable],
    pairs: list[tuple[ShapeEntry, str, JobTime]],
    columns: _Columns,
    spot_runs: dict[int, SpotRun],
    memo: ShapeCosts,
) -> list[Costed | None]:
    """The Costed of each offer from its columns (None where it has neither plan), as cost_offer builds it."""
    job = memo.job
    rate, deadline, budget = job.rate, job.spec.deadline_hours, job.budget
    made: list[Costed | None] = []
    make = Costed._make
    for (group, entry, topology, time), pair, assessed, use_spot, on_demand, cost, hours, billed, price in zip(
        costable, *columns, strict=True
    ):
        if not use_spot and not on_demand:
            made.append(None)
            continue
        provider = pairs[pair][1]
        spot_args = None
        if assessed:
            run = spot_runs[pair]
            spot_args = (provider, 1, run.hours, run.write_s, rate, group.interruptible, group.on_demand, deadline)
        if use_spot:
            run = spot_runs[pair]
            overheads, p_done = run.overheads, run.model.p_spot  # type: ignore[union-attr]
        else:
            overheads = entry.od_overheads
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
