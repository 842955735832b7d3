"""Spot-risk calculator: checkpoint interval, expected spot wall time and cost, deadline odds, spot-or-on-demand verdict.
"""

from tools.spot.risk import Billing, DEFAULT_DEADLINE_CONFIDENCE, HOUR, RunModel, SpotRiskRequest, SpotRiskResult, assess_spot, billed_seconds, default_preemption_rate, price_outcome, provider_notice, run_model

__all__ = ['Billing', 'DEFAULT_DEADLINE_CONFIDENCE', 'HOUR', 'RunModel', 'SpotRiskRequest', 'SpotRiskResult', 'assess_spot', 'billed_seconds', 'default_preemption_rate', 'price_outcome', 'provider_notice', 'run_model']
