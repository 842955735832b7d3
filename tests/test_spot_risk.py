"""Spot-risk calculator: Daly's interval, closed forms versus a seeded Monte Carlo run, verdict behaviour."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tools.spot.completion import (
    Billing,
    billed_seconds,
    completion_on_notice,
    completion_periodic,
    daly_interval_s,
    expected_billed_s,
    expected_billed_session_s,
    probability_done_by,
    young_interval_s,
)
from tools.spot.risk import (
    SpotRiskRequest,
    assess_spot,
)

MIN = 60.0
HOUR = 3600.0


@pytest.mark.parametrize("mtbf_h, expected_min", [(24, 116.7), (6, 56.7), (0.25, 9.1)])
def test_daly_interval_matches_the_papers_examples(mtbf_h: float, expected_min: float) -> None:
    """Daly 2006 worked examples quoted in hardware.md §3.1 (δ = 5 min)."""
    assert daly_interval_s(5 * MIN, mtbf_h * HOUR) / MIN == pytest.approx(expected_min, abs=0.1)


def test_daly_is_close_to_young_when_checkpoints_are_cheap() -> None:
    """For δ ≪ M the higher-order terms vanish and Daly ≈ Young − δ."""
    delta, mtbf = 10.0, 100 * HOUR
    assert daly_interval_s(delta, mtbf) == pytest.approx(young_interval_s(delta, mtbf) - delta, rel=0.01)


def test_daly_caps_at_mtbf_for_slow_checkpoints() -> None:
    """δ ≥ 2M: the paper's rule is τ = M."""
    assert daly_interval_s(3 * HOUR, HOUR) == HOUR


def simulate(
    work: float,
    interval: float,
    delta: float,
    restart: float,
    rate: float,
    billing: Billing,
    runs: int,
    seed: int,
    on_notice: bool = False,
) -> tuple[list[float], list[float]]:
    """Seeded Monte Carlo of the spot model: wall times and billed seconds per run."""
    rng = random.Random(seed)
    walls, bills = [], []
    for _ in range(runs):
        done, wall, billed, session, pending_restart = 0.0, 0.0, 0.0, 0.0, 0.0
        while done < work - 1e-9:
            if on_notice:
                seg = work - done
            else:
                seg_work = min(interval, work - done)
                seg = seg_work + (delta if seg_work == interval and done + seg_work < work - 1e-9 else 0.0)
            session += pending_restart
            wall += pending_restart
            pending_restart = 0.0
            t = rng.expovariate(rate) if rate > 0 else math.inf
            if t >= seg:
                wall += seg
                session += seg
                done += seg if on_notice else min(interval, work - done)
            else:
                wall += t
                session += t
                if on_notice:
                    done += t
                    wall += delta
                    session += delta
                billed += billed_seconds(session, billing)
                session = 0.0
                pending_restart = restart
        billed += billed_seconds(session, billing)
        walls.append(wall)
        bills.append(billed)
    return walls, bills


CASES = [
    # work, delta, restart, rate per hour, billing
    (20 * HOUR, 120.0, 600.0, 0.1, Billing()),
    (50 * HOUR, 300.0, 900.0, 0.05, Billing(granularity_s=60.0, minimum_s=60.0)),
    (6 * HOUR, 60.0, 300.0, 0.5, Billing(granularity_s=HOUR)),
    (3 * HOUR, 30.0, 600.0, 0.02, Billing(granularity_s=60.0, minimum_s=300.0)),
]


@pytest.mark.parametrize("work, delta, restart, rate_h, billing", CASES)
def test_closed_forms_agree_with_monte_carlo(
    work: float, delta: float, restart: float, rate_h: float, billing: Billing
) -> None:
    """Expected wall time, billed time and deadline probability match a 4000-run simulation of the same model."""
    rate = rate_h / HOUR
    interval = daly_interval_s(delta, 1 / rate)
    completion = completion_periodic(work, interval, delta, restart, rate)
    walls, bills = simulate(work, interval, delta, restart, rate, billing, runs=4000, seed=7)
    mean_wall = sum(walls) / len(walls)
    sd = math.sqrt(sum((w - mean_wall) ** 2 for w in walls) / len(walls))
    assert completion.mean_s == pytest.approx(mean_wall, rel=0.01)
    assert math.sqrt(completion.variance_s2) == pytest.approx(sd, rel=0.08, abs=60)
    billed = expected_billed_s(completion, restart, rate, billing)
    assert billed == pytest.approx(sum(bills) / len(bills), rel=0.02)
    for quantile in (0.5, 0.8, 0.95):
        deadline = sorted(walls)[int(quantile * len(walls))]
        observed = sum(1 for w in walls if w <= deadline) / len(walls)
        assert probability_done_by(completion, deadline) == pytest.approx(observed, abs=0.05)


def test_checkpoint_on_notice_matches_monte_carlo() -> None:
    """With a save inside the notice no work is lost; the Poisson closed form matches the simulation."""
    work, delta, restart, rate = 30 * HOUR, 60.0, 600.0, 0.2 / HOUR
    completion = completion_on_notice(work, delta, restart, rate)
    walls, _ = simulate(work, work, delta, restart, rate, Billing(), runs=3000, seed=3, on_notice=True)
    assert completion.mean_s == pytest.approx(sum(walls) / len(walls), rel=0.01)
    deadline = sorted(walls)[int(0.9 * len(walls))]
    observed = sum(1 for w in walls if w <= deadline) / len(walls)
    assert probability_done_by(completion, deadline) == pytest.approx(observed, abs=0.04)


def test_session_billing_formula_matches_direct_expectation() -> None:
    """Exact expected charge of a preempted session against numeric integration over the exponential."""
    rate, restart, billing = 1 / 1800.0, 700.0, Billing(granularity_s=600.0, minimum_s=1800.0)
    step, total, t = 0.5, 0.0, 0.0
    while t < 60 * 3600:
        total += billed_seconds(restart + t + step / 2, billing) * rate * math.exp(-rate * (t + step / 2)) * step
        t += step
    assert expected_billed_session_s(restart, rate, billing) == pytest.approx(total, rel=1e-3)


def request(**overrides: object) -> SpotRiskRequest:
    """A spot question with sensible defaults."""
    values: dict[str, object] = dict(
        job_hours=10.0,
        checkpoint_write_s=120.0,
        restart_overhead_s=600.0,
        preemption_rate_per_hour=0.05,
        spot_price_per_hour=1.0,
        on_demand_price_per_hour=2.5,
    )
    values.update(overrides)
    return SpotRiskRequest(**values)


def test_cheap_spot_with_rare_preemptions_is_recommended() -> None:
    """60 % cheaper spot and one preemption per 20 h: spot wins, and the saving is stated."""
    result = assess_spot(request())
    assert result.verdict == "spot" and result.reason == "cheaper"
    assert result.savings_usd == pytest.approx(result.on_demand_cost_usd - result.expected_spot_cost_usd)
    assert 0 < result.savings_fraction < 0.6
    assert result.expected_spot_hours > result.on_demand_hours


def test_tight_deadline_turns_spot_down() -> None:
    """A deadline barely above the job length leaves no room for preemptions."""
    result = assess_spot(request(deadline_hours=10.2, preemption_rate_per_hour=0.3))
    assert result.verdict == "on_demand" and result.reason == "deadline_risk"
    assert result.p_on_demand_done_by_deadline == 1.0
    assert result.p_spot_done_by_deadline < 0.9


def test_no_spot_price_means_no_spot_offer() -> None:
    """An offer without a spot price cannot be rented as spot."""
    result = assess_spot(request(spot_price_per_hour=None))
    assert result.verdict == "no_spot_offer" and result.expected_spot_cost_usd is None


def test_default_rate_is_stated_with_its_source() -> None:
    """When no rate is given the provider default is used and its source is returned."""
    result = assess_spot(request(preemption_rate_per_hour=None, provider="vast"))
    assert (
        result.preemption_rate_per_hour
        > assess_spot(request(preemption_rate_per_hour=None, provider="aws")).preemption_rate_per_hour
    )
    assert "assumption" in result.preemption_rate_source


def test_bad_input_is_rejected() -> None:
    """Negative prices or hours are refused at the boundary."""
    with pytest.raises(ValidationError):
        SpotRiskRequest(job_hours=-1)
    with pytest.raises(ValidationError):
        request(spot_price_per_hour=-0.5)


@settings(max_examples=40, deadline=None)
@given(
    hours=st.floats(0.2, 500),
    spot=st.floats(0.1, 0.9),
    delta=st.floats(0, 1800),
    restart=st.floats(60, 3600),
    gran=st.sampled_from([1.0, 60.0, 3600.0]),
)
def test_spot_verdict_flips_once_as_preemption_rate_rises(
    hours: float, spot: float, delta: float, restart: float, gran: float
) -> None:
    """Expected spot cost never falls as preemptions get more frequent (each costs >= 1 min), so the verdict flips once."""
    costs, verdicts = [], []
    for rate in (0.0, 0.01, 0.05, 0.2, 1.0, 5.0, 50.0, 1000.0):
        result = assess_spot(
            request(
                job_hours=hours,
                spot_price_per_hour=spot,
                on_demand_price_per_hour=1.0,
                checkpoint_write_s=delta,
                restart_overhead_s=restart,
                preemption_rate_per_hour=rate,
                billing_granularity_s=gran,
            )
        )
        costs.append(result.expected_spot_cost_usd if result.expected_spot_cost_usd is not None else math.inf)
        verdicts.append(result.verdict)
    assert all(b >= a * (1 - 1e-9) for a, b in itertools.pairwise(costs))
    flips = sum(1 for a, b in itertools.pairwise(verdicts) if a != b)
    assert flips <= 1
    assert verdicts[0] == "spot"
    assert verdicts[-1] == "on_demand"


@settings(max_examples=40, deadline=None)
@given(
    hours=st.floats(0.01, 1000),
    rate=st.floats(0, 10),
    gran=st.sampled_from([1.0, 60.0, 3600.0]),
    minimum=st.sampled_from([0.0, 60.0, 300.0]),
)
def test_spot_cost_never_below_price_times_hours(hours: float, rate: float, gran: float, minimum: float) -> None:
    """Billed time is at least the work itself, on spot and on demand."""
    result = assess_spot(
        request(job_hours=hours, preemption_rate_per_hour=rate, billing_granularity_s=gran, billing_minimum_s=minimum)
    )
    assert result.on_demand_cost_usd >= 2.5 * hours * (1 - 1e-9)
    if result.expected_spot_cost_usd is not None and math.isfinite(result.expected_spot_cost_usd):
        assert result.expected_spot_cost_usd >= 1.0 * hours * (1 - 1e-9)
        assert result.expected_spot_hours >= hours * (1 - 1e-9)


def test_a_billing_interval_below_float_precision_is_billed_as_continuous_time():
    """1e-320 s (a denormal) or 5e-324 s: the g -> 0 limit, E[max(restart + X, minimum)] with X ~ Exp(rate),
    computed by hand here, and the same figure a fine but representable interval gives."""
    import math

    from tools.spot.completion import Billing, expected_billed_session_s

    rate, restart, minimum = 1 / 3600, 120.0, 600.0
    by_hand = minimum + math.exp(-rate * (minimum - restart)) / rate
    for g in (1e-320, 5e-324):
        assert expected_billed_session_s(restart, rate, Billing(granularity_s=g, minimum_s=minimum)) == pytest.approx(
            by_hand, rel=1e-12
        )
    fine = expected_billed_session_s(restart, rate, Billing(granularity_s=1e-6, minimum_s=minimum))
    assert fine == pytest.approx(by_hand, rel=1e-6)
    assert expected_billed_session_s(restart, rate, Billing(granularity_s=1e-320)) == pytest.approx(restart + 1 / rate)
