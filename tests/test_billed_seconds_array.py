"""billed_seconds over arrays (tools.spot.billed_seconds_array, the ranking's on-demand billing) equals the scalar
billed_seconds bit for bit: any run time, granularity and minimum, exact multiples, zero, negative, huge and
non-finite runs (issue 27)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tools.spot import Billing, billed_seconds, billed_seconds_array

RUNS = st.one_of(
    st.floats(min_value=-10.0, max_value=1e9, allow_nan=False),
    st.sampled_from([0.0, -0.0, 1e-300, 1e300, math.inf, math.nan, 3600.0, 7200.0000001, 59.999999999]),
    st.integers(min_value=1, max_value=10_000).map(lambda units: units * 60.0),
)
RULES = st.tuples(
    st.sampled_from([1.0, 60.0, 3600.0, 0.001, 1e-20, 86400.0]), st.sampled_from([0.0, 60.0, 600.0, 3600.0])
)


def _bits(value: float) -> str:
    """A float's exact bits (NaN as one value)."""
    return "nan" if math.isnan(value) else float(value).hex()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(RUNS, RULES), min_size=1, max_size=40))
def test_array_equals_scalar(sessions: list[tuple[float, tuple[float, float]]]) -> None:
    """Each element is billed_seconds of its own run and rule."""
    runs = np.array([run for run, _rule in sessions])
    granularity = np.array([rule[0] for _run, rule in sessions])
    minimum = np.array([rule[1] for _run, rule in sessions])
    found = billed_seconds_array(runs, granularity, minimum).tolist()
    for (run, (step, least)), value in zip(sessions, found, strict=True):
        assert _bits(value) == _bits(billed_seconds(run, Billing(granularity_s=step, minimum_s=least)))


def test_rounding_and_minimum() -> None:
    """Per-minute billing with a 10-minute minimum: a short run pays the minimum, a long one whole minutes."""
    found = billed_seconds_array(np.array([30.0, 601.0, 0.0]), np.full(3, 60.0), np.full(3, 600.0)).tolist()
    assert found == [600.0, 660.0, 0.0]
