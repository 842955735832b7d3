"""choose_headline reads a ranking's ~1,000 plans in as few passes as it can (issue 27); the headline it picks is the
one the plain definition picks: that definition is kept here, as written before, and compared on generated plan
lists (ties, NaN costs, unsorted lists, outlier prices, advised and assumed-fabric layouts, spot on several nodes
under a deadline, deadline margins, one node and several)."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tools.ranking.headline import (
    CERTAINTY_SHARE,
    NEAR_TIE_SHARE,
    NEAR_TIE_USD,
    advised,
    choose_headline,
    has_margin,
    is_outlier,
    spot_nodes_under_deadline,
    undominated,
)


def _pick_by_definition(eligible: list[Any], deadline_hours: float | None) -> Any:
    """The headline as the definition reads: every filtered list in full."""
    trusted = [c for c in eligible if not is_outlier(c)] or eligible
    pool = [c for c in trusted if advised(c)] or trusted
    pool = [c for c in pool if has_margin(c.hours, deadline_hours)] or pool
    safe = [c for c in pool if not spot_nodes_under_deadline(c, deadline_hours)]
    if safe and safe[0].cost <= (1 + CERTAINTY_SHARE) * pool[0].cost:
        pool = safe
    cheapest = pool[0]
    slack = max(NEAR_TIE_SHARE * cheapest.cost, NEAR_TIE_USD)
    near = [c for c in pool if c.cost <= cheapest.cost + slack]
    return min(
        undominated(near) or [cheapest],
        key=lambda c: (c.nodes, c.offer.gpu_count * c.nodes, bool(c.use_spot), c.cost),
    )


_plan = st.fixed_dictionaries(
    {
        "cost": st.one_of(st.sampled_from([1.0, 1.5, 2.0, 2.5, 3.0, 20.0, 21.0, math.nan, math.inf]), st.floats(0, 40)),
        "hours": st.one_of(st.floats(0.1, 60, allow_nan=False), st.sampled_from([5.0, 10.0, math.nan])),
        "nodes": st.sampled_from([1, 2, 4]),
        "spot": st.booleans(),
        "gpus": st.sampled_from([1, 2, 8]),
        "outlier": st.sampled_from([None, None, None, "price_below_peers", "spot_below_peers"]),
        "verdict": st.sampled_from(["multi_gpu_ok", "single_gpu_ok", "multi_node_slow_fabric"]),
        "assumed": st.booleans(),
    }
)


def _plans(drawn: list[dict[str, Any]]) -> list[Any]:
    """Plans as the ranking hands them over (the attributes both functions read)."""
    made = []
    for fields in drawn:
        made.append(
            SimpleNamespace(
                cost=fields["cost"],
                hours=fields["hours"],
                nodes=fields["nodes"],
                use_spot=fields["spot"],
                offer=SimpleNamespace(
                    gpu_count=fields["gpus"],
                    provider="p",
                    on_demand_is_market=False,
                    spot_price_per_hour=1.0,
                    price_outlier=fields["outlier"],
                    peer_median_price=None,
                ),
                group=SimpleNamespace(outlier=fields["outlier"]),
                topology=SimpleNamespace(verdict=fields["verdict"], params={"inter_node_assumed": fields["assumed"]}),
            )
        )
    return made


@settings(max_examples=600, deadline=None)
@given(
    drawn=st.lists(_plan, min_size=1, max_size=24),
    deadline=st.sampled_from([None, 5.0, 12.0, 40.0, 60.0]),
    sort=st.booleans(),
)
def test_the_headline_is_the_one_the_definition_picks(
    drawn: list[dict[str, Any]], deadline: float | None, sort: bool
) -> None:
    plans = _plans(drawn)
    if sort:  # as the ranking hands them over: cheapest first (NaN costs leave the order undefined)
        plans.sort(key=lambda c: (c.cost, c.hours))
    ordered, _reason = choose_headline(plans, deadline)
    assert ordered[0] is _pick_by_definition(plans, deadline)
    assert sorted(map(id, ordered)) == sorted(map(id, plans)) and ordered[1:] == [
        c for c in plans if c is not ordered[0]
    ]
