"""The schema of one provider's record (tools/providers/data/<id>.json): everything gpu-advisor knows about a
provider in one file, validated when the records are loaded (an unknown field or a wrong type is an error)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class InterNodeFabric(BaseModel):
    """The network between nodes of a multi-node instance type."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    pattern: str = Field(description="Regular expression matched against the instance type.")
    fabric: str = Field(description="What it is, e.g. 'EFA v2 32x100 Gb/s'.")
    node_gbps: float = Field(description="Total inter-node bandwidth per node, Gbit/s, one direction.")
    per_gpu_gbps: float = Field(description="Inter-node bandwidth per GPU, Gbit/s, one direction.")
    source: str = Field(description="Where the figures come from.")

    @property
    def per_gpu_gbs(self) -> float:
        """Inter-node bandwidth per GPU in GB/s (bytes), what collective-cost formulas want."""
        return self.per_gpu_gbps / 8

    def matches(self, instance_type: str) -> bool:
        """Whether this fabric is the one of `instance_type`."""
        return re.search(self.pattern, instance_type) is not None


class Pricing(BaseModel):
    """How the provider's catalog prices behave (tools/catalog/price_trust.py)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    on_demand_is_market: bool = Field(description="The listed on-demand price is a market/auction price.")
    interruptible: bool = Field(description="An instance rented at the listed on-demand price can be interrupted.")
    spot_kind: Literal["market", "auction", "bid", "none"] | None = Field(
        description="'market' (provider-set, moves with demand), 'auction', 'bid', 'none' (no spot tier), or null."
    )
    source: str
    note: str | None = None


class FormFactorRule(BaseModel):
    """Instance types whose GPUs are of a known form factor although the catalog row does not say it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    pattern: str = Field(description="Regular expression matched against the instance type.")
    form_factor: Literal["SXM", "PCIe"]
    source: str


class CatalogQuirks(BaseModel):
    """How the provider's rows in SkyPilot's catalog read (tools/catalog/importers/)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gpu_memory_in_catalog: Literal["per_gpu", "summed", "ignore"] = Field(
        "per_gpu",
        description="What GpuInfo's memory figure means: per GPU, summed over the instance's GPUs, or "
        "not GPU memory at all (ignored).",
    )
    aggregator: bool = Field(False, description="The instance-type prefix names the upstream provider.")
    form_factor_rules: tuple[FormFactorRule, ...] = ()
    refreshed_by_update: bool = Field(False, description="`catalog update` fetches this cloud's file by default.")


class SkyPilotCloud(BaseModel):
    """The provider as SkyPilot knows it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cloud: str = Field(description="SkyPilot's `infra` cloud name.")
    launchable: bool = Field(description="SkyPilot can launch a task on this provider.")


class ProviderRecord(BaseModel):
    """One provider: billing, spot, storage and networking facts, pricing semantics, catalog quirks and SkyPilot."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9]+$", description="Provider id: the SkyPilot cloud name where there is one.")
    display_name: str = ""
    aliases: tuple[str, ...] = Field((), description="Other names people use (lower case), e.g. 'amazon'.")
    billing_granularity_s: int | None = Field(None, description="Billing increment in seconds (1 = per second).")
    billing_minimum_s: int | None = Field(None, description="Minimum billed time per start, seconds.")
    spot_available: bool | None = Field(None, description="Whether the provider sells spot/interruptible capacity.")
    spot_notice_s: int | None = Field(None, description="Warning before a spot instance is reclaimed, seconds.")
    spot_max_runtime_s: int | None = Field(None, description="Longest a spot instance may run; None = no limit known.")
    spot_interruption_behavior: str | None = None
    spot_interruption_data: str | None = Field(None, description="What interruption-rate data the provider publishes.")
    egress_usd_per_gb: float | None = Field(None, description="Internet egress, USD per GB, first paid tier.")
    can_stop: bool | None = Field(None, description="Whether an instance can be stopped (not only terminated).")
    storage_persists_when_stopped: bool | None = None
    inter_node_fabric: tuple[InterNodeFabric, ...] = ()
    pricing: Pricing | None = Field(None, description="How its catalog prices behave; null when not known.")
    catalog: CatalogQuirks | None = Field(None, description="How its SkyPilot catalog rows read; null: no catalog.")
    spot_marketplace: bool = Field(
        False,
        description="Spot capacity comes from a marketplace of hosts (no provider-wide interruption figures apply).",
    )
    skypilot: SkyPilotCloud | None = None
    sources: dict[str, str] = Field(default_factory=dict, description="Source of each fact, by field name.")
    notes: dict[str, str] = Field(default_factory=dict, description="Caveats of each fact, by field name.")
