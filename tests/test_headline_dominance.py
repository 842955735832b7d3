"""The headline's near-tie dominance filter (one sort per safety class) against the pairwise rule it replaces."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from tools.ranking.headline import dominated, undominated

VALUES = st.one_of(st.sampled_from([0.0, 1.0, 2.0, 3.0, float("inf")]), st.floats(0, 10, allow_nan=False))
PLANS = st.lists(st.builds(SimpleNamespace, cost=VALUES, hours=VALUES, use_spot=st.booleans()), max_size=25)


@settings(max_examples=300, deadline=None)
@given(PLANS)
def test_undominated_keeps_exactly_the_plans_no_other_plan_dominates(plans):
    expected = [plan for plan in plans if not dominated(plan, plans)]
    assert [id(plan) for plan in undominated(plans)] == [id(plan) for plan in expected]


def test_an_on_demand_plan_is_never_beaten_by_a_cheaper_faster_spot_plan():
    on_demand = SimpleNamespace(cost=10.0, hours=5.0, use_spot=False)
    spot = SimpleNamespace(cost=8.0, hours=4.0, use_spot=True)
    slower_spot = SimpleNamespace(cost=9.0, hours=6.0, use_spot=True)
    assert undominated([on_demand, spot, slower_spot]) == [on_demand, spot]


def test_a_nan_cost_falls_back_to_the_pairwise_rule():
    plans = [
        SimpleNamespace(cost=float("nan"), hours=1.0, use_spot=False),
        SimpleNamespace(cost=1.0, hours=1.0, use_spot=False),
        SimpleNamespace(cost=2.0, hours=2.0, use_spot=False),
    ]
    assert undominated(plans) == plans[:2]
