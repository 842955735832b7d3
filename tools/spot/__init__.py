"""Spot-risk calculator: checkpoint interval, expected spot wall time and cost, deadline odds and the spot or
on-demand verdict (`risk`), on the arithmetic of a preempted run (`completion`).
"""

from tools.spot.completion import Billing, billed_seconds, billed_seconds_array
from tools.spot.risk import (
    DEFAULT_DEADLINE_CONFIDENCE,
    HOUR,
    RunModel,
    SpotRiskRequest,
    SpotRiskResult,
    assess_spot,
    default_preemption_rate,
    price_outcome,
    provider_notice,
    run_model,
)

__all__ = [
    "DEFAULT_DEADLINE_CONFIDENCE",
    "HOUR",
    "Billing",
    "RunModel",
    "SpotRiskRequest",
    "SpotRiskResult",
    "assess_spot",
    "billed_seconds",
    "billed_seconds_array",
    "default_preemption_rate",
    "price_outcome",
    "provider_notice",
    "run_model",
]
