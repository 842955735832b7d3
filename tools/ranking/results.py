"""Result types of the ranking: one reason, one ranked offer, the whole ranking (pydantic, JSON-ready)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from tools.fx import FxUsed

BindingLimit = Literal["memory", "compute", "budget", "availability"]


class Reason(BaseModel):
    """One reason behind an offer's place: a code and parameters for the agent, and an English line."""

    code: str
    text: str
    params: dict[str, Any] = Field(default_factory=dict)


class RankedOffer(BaseModel):
    """One offer with the job's estimated time and cost on it."""

    provider: str
    instance_type: str
    gpu: str
    gpu_form_factor: str | None
    gpu_count: int = Field(description="GPUs per instance.")
    nodes: int = Field(description="Instances rented together (multi-node when > 1).")
    total_gpus: int
    vram_gib_per_gpu: float | None
    region: str | None
    regions: list[str] = Field(description="Every region with the same instance at the same prices.")
    zones_collapsed: int = Field(
        default=0,
        description="Other entries of the same instance in the same region (other zones, dearer) folded into this one.",
    )
    spot: bool = Field(description="True when the estimate is for spot/interruptible capacity.")
    price_per_hour: float = Field(description="USD per hour for all instances at the chosen pricing (spot or not).")
    on_demand_price_per_hour: float | None
    spot_price_per_hour: float | None
    on_demand_is_market: bool = Field(
        default=False,
        description="The provider's 'on-demand' price is a market/auction price: treated as interruptible.",
    )
    price_outlier: str | None = Field(
        default=None,
        description="Set when the price is far from the same GPU elsewhere and unverified (tools.catalog.price_trust).",
    )
    peer_median_price: float | None = None
    est_hours: float = Field(description="Expected wall-clock hours (spot: including preemptions), setup included.")
    train_hours: float | None = Field(default=None, description="Hours of training steps alone.")
    overhead_hours: dict[str, float] = Field(default_factory=dict, description="Hours outside training steps.")
    est_cost: float = Field(description="Expected total cost in USD, billing rounding included.")
    est_cost_budget_currency: float | None
    billed_hours: float
    fits: bool
    per_gpu_gib: float | None
    layout: str | None
    topology_verdict: str
    topology_params: dict[str, Any]
    exposed_comm_share: float | None
    spot_verdict: str | None
    spot_savings_usd: float | None
    p_done_by_deadline: float | None
    meets_budget: bool | None
    meets_deadline: bool | None
    misses: list[str] = Field(
        default_factory=list,
        description="The user's limits this plan misses: 'budget', "
        "'deadline' (an alternative that misses one says so).",
    )
    settings: dict[str, Any] = Field(
        default_factory=dict,
        description="Training settings the memory, time and "
        "price were computed with: layout, sharding, tensor_parallel, "
        "gradient_checkpointing, gradient_accumulation_steps, micro_batch_size, seq_len, "
        "method, lora_rank.",
    )
    reasons: list[Reason]


class RankingResult(BaseModel):
    """Offers that meet every constraint (headline first, then cheapest first), alternatives, what was excluded and
    why, and, when nothing qualifies, the limit that binds."""

    offers: list[RankedOffer]
    total_eligible: int
    cheapest_that_fits: RankedOffer | None = Field(
        description="Cheapest offer the job fits on, ignoring budget and deadline."
    )
    fastest: RankedOffer | None = Field(description="Fastest offer the job fits on, ignoring budget and deadline.")
    on_demand_alternative: RankedOffer | None = Field(
        default=None,
        description="When the headline is interruptible: the cheapest on-demand plan that misses "
        "neither the budget nor the deadline (None when no such plan exists).",
    )
    excluded: dict[str, int]
    considered: int
    budget_usd: float | None
    fx: FxUsed | None
    deadline_hours: float | None
    memory_margin: float
    model_id: str
    method: str
    tokens: float
    catalog: dict[str, Any]
    assumptions: list[str]
    headline_reason: Reason | None = Field(
        default=None, description="Why the first offer leads when it is not the cheapest (simpler near-tie, outlier)."
    )
    binding_limit: BindingLimit | None = Field(
        default=None,
        description="When no offer qualifies: the limit that "
        "binds (memory, compute for the deadline, budget, availability).",
    )
    binding_params: dict[str, Any] = Field(default_factory=dict, description="Numbers behind the binding limit.")
