"""The arithmetic of a spot run: billed seconds under a provider's granularity and minimum, checkpoint intervals
(Young, Daly), the completion-time moments of a job that is preempted at Poisson times and restarts from its last
checkpoint, the chance to finish by a deadline, and the expected billed time."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

MAX_EXPONENT = 600.0
"""exp() arguments are clipped here: beyond it a term is zero or infinite for every purpose."""


@dataclass(frozen=True, kw_only=True)
class Billing:
    """How a provider rounds one instance session: per `granularity_s` seconds, at least `minimum_s`."""

    granularity_s: float = 1.0
    minimum_s: float = 0.0


def billed_seconds(run_s: float, billing: Billing) -> float:
    """Seconds charged for one session of `run_s` seconds."""
    if run_s <= 0:
        return 0.0
    ratio = run_s / billing.granularity_s
    if not math.isfinite(ratio) or ratio > 2**52:  # an interval far below float precision: billed as run
        return max(run_s, billing.minimum_s)
    units = max(math.ceil(ratio - 1e-9), 1)  # tolerance only for float noise at multiples
    return max(units * billing.granularity_s, billing.minimum_s)


def billed_seconds_array(run_s: np.ndarray, granularity_s: np.ndarray, minimum_s: np.ndarray) -> np.ndarray:
    """billed_seconds element by element (each session with its own billing rule), the same float operations: where
    the scalar function takes Python's max, the first value unless the second is larger."""
    import numpy as np  # only the ranking costs sessions in bulk (the spot calculator alone imports no numpy)

    with np.errstate(invalid="ignore", over="ignore"):
        ratio = run_s / granularity_s
        as_run = ~np.isfinite(ratio) | (ratio > 2**52)
        units = np.ceil(ratio - 1e-9)
        units = np.where(units < 1.0, 1.0, units)
        rounded = units * granularity_s
        billed = np.where(
            as_run, np.where(minimum_s > run_s, minimum_s, run_s), np.where(minimum_s > rounded, minimum_s, rounded)
        )
    return np.where(run_s <= 0, 0.0, billed)


def expected_billed_session_s(restart_s: float, rate_per_s: float, billing: Billing) -> float:
    """Expected seconds charged for a session of `restart_s` + Exp(rate) seconds that ends in a preemption (exact)."""
    if not (restart_s / (g := billing.granularity_s) <= 2**52 >= billing.minimum_s / g and rate_per_s * g >= 1e-12):
        return (start := max(restart_s, billing.minimum_s)) + math.exp(-rate_per_s * (start - restart_s)) / rate_per_s
    first_unit = math.floor(restart_s / g) + 1
    min_units = math.ceil(billing.minimum_s / g - 1e-9)
    k = max(first_unit, min_units)
    tail = math.exp(-rate_per_s * (k * g - restart_s)) / -math.expm1(-rate_per_s * g)
    return g * (k + tail)


def young_interval_s(checkpoint_s: float, mtbf_s: float) -> float:
    """Young (1974): τ = √(2 δ M)."""
    return math.sqrt(2.0 * checkpoint_s * mtbf_s)


def daly_interval_s(checkpoint_s: float, mtbf_s: float) -> float:
    """Daly (2006) higher-order optimum checkpoint interval; M when δ ≥ 2M (hardware.md §3.1)."""
    if checkpoint_s >= 2.0 * mtbf_s:
        return mtbf_s
    ratio = checkpoint_s / (2.0 * mtbf_s)
    return math.sqrt(2.0 * checkpoint_s * mtbf_s) * (1 + math.sqrt(ratio) / 3 + ratio / 9) - checkpoint_s


@dataclass(frozen=True, kw_only=True)
class Completion:
    """Distribution summary of the wall time of a job under preemptions."""

    base_s: float
    """Wall time when nothing is preempted (work plus checkpoint writes)."""
    mean_s: float
    variance_s2: float
    p_no_preemption: float
    expected_preemptions: float
    cost_per_preemption_s: float | None = None
    """Set when every preemption costs the same time (checkpoint on notice): the count is then Poisson."""


def _segment_moments(length_s: float, rate: float, restart_s: float) -> tuple[float, float, float]:
    """Mean and variance of the extra time to finish one segment, and its expected number of preemptions."""
    lx = rate * length_s
    if lx <= 0:
        return 0.0, 0.0, 0.0
    if lx > MAX_EXPONENT:
        return math.inf, math.inf, math.inf
    q = -math.expm1(-lx)  # P(preempted before the segment ends)
    p = math.exp(-lx)
    if lx < 1e-6:
        mean_lost, second_lost = length_s / 2.0, length_s**2 / 3.0
    else:
        mean_lost = 1.0 / rate - length_s * p / q
        second_lost = (2.0 / rate**2 - p * (length_s**2 + 2.0 * length_s / rate + 2.0 / rate**2)) / q
    var_lost = max(second_lost - mean_lost**2, 0.0)
    mean_k = math.expm1(lx)
    var_k = mean_k * math.exp(lx)
    per_event = mean_lost + restart_s
    return mean_k * per_event, mean_k * var_lost + var_k * per_event**2, mean_k


def completion_periodic(
    work_s: float, interval_s: float, checkpoint_s: float, restart_s: float, rate_per_s: float
) -> Completion:
    """Wall-time distribution when the job checkpoints every `interval_s` seconds of work."""
    full = math.floor(work_s / interval_s + 1e-12) if interval_s > 0 else 0
    rest = max(work_s - full * interval_s, 0.0)
    seg_len = interval_s + checkpoint_s
    m1, v1, k1 = _segment_moments(seg_len, rate_per_s, restart_s)
    m2, v2, k2 = _segment_moments(rest, rate_per_s, restart_s)
    base = full * seg_len + rest
    mean_extra = full * m1 + m2 if full else m2
    var_extra = full * v1 + v2 if full else v2
    preemptions = full * k1 + k2 if full else k2
    return Completion(
        base_s=base,
        mean_s=base + mean_extra,
        variance_s2=var_extra,
        p_no_preemption=math.exp(-rate_per_s * base),
        expected_preemptions=preemptions,
    )


def completion_on_notice(work_s: float, checkpoint_s: float, restart_s: float, rate_per_s: float) -> Completion:
    """Wall-time distribution when each preemption is met by a checkpoint inside the notice window: no lost work."""
    per_event = restart_s + checkpoint_s
    expected = rate_per_s * work_s
    return Completion(
        base_s=work_s,
        mean_s=work_s + expected * per_event,
        variance_s2=expected * per_event**2,
        p_no_preemption=math.exp(-expected),
        expected_preemptions=expected,
        cost_per_preemption_s=per_event,
    )


def _poisson_cdf(k: int, mean: float) -> float:
    """P(N ≤ k) for N ~ Poisson(mean)."""
    if k < 0:
        return 0.0
    if k > mean + 40.0 * math.sqrt(mean) + 50.0:  # beyond 40 standard deviations: the tail is below 1e-300
        return 1.0
    if mean > 1e4:  # normal approximation (continuity-corrected): exact sums would take k steps
        return 0.5 * math.erfc(-(k + 0.5 - mean) / math.sqrt(2.0 * mean))
    term = math.exp(-mean) if mean < MAX_EXPONENT else 0.0
    if term == 0.0:
        log_term, total = -mean, 0.0
        for i in range(k + 1):
            total += math.exp(log_term)
            log_term += math.log(mean) - math.log(i + 1)
        return min(total, 1.0)
    total = term
    for i in range(1, k + 1):
        term *= mean / i
        total += term
    return min(total, 1.0)


def probability_done_by(completion: Completion, deadline_s: float) -> float:
    """Probability that the job finishes within `deadline_s` seconds of wall time."""
    slack = deadline_s - completion.base_s
    if slack < 0:
        return 0.0
    if not math.isfinite(completion.mean_s):
        return 0.0
    if completion.cost_per_preemption_s is not None:
        if completion.cost_per_preemption_s <= 0:
            return 1.0
        allowed = slack / completion.cost_per_preemption_s
        if not math.isfinite(allowed):
            return 1.0
        return _poisson_cdf(math.floor(allowed), completion.expected_preemptions)
    p0 = completion.p_no_preemption
    if p0 >= 1.0:
        return 1.0
    extra_mean = (completion.mean_s - completion.base_s) / (1.0 - p0)
    extra_second = (completion.variance_s2 + (completion.mean_s - completion.base_s) ** 2) / (1.0 - p0)
    extra_var = max(extra_second - extra_mean**2, 1e-12)
    if slack <= 0 or extra_mean <= 0:
        return p0
    sigma2 = math.log1p(extra_var / extra_mean**2)
    mu = math.log(extra_mean) - sigma2 / 2.0
    z = (math.log(slack) - mu) / math.sqrt(sigma2)
    return p0 + (1.0 - p0) * 0.5 * math.erfc(-z / math.sqrt(2.0))


def expected_billed_s(completion: Completion, restart_s: float, rate_per_s: float, billing: Billing) -> float:
    """Expected seconds charged over all instance sessions of one spot run."""
    final_overhead = billed_seconds(completion.base_s, billing) - completion.base_s
    if completion.expected_preemptions <= 0 or rate_per_s <= 0:
        return completion.mean_s + final_overhead
    per_session = expected_billed_session_s(restart_s, rate_per_s, billing) - (restart_s + 1.0 / rate_per_s)
    return completion.mean_s + completion.expected_preemptions * max(per_session, 0.0) + final_overhead
