"""One rentable GPU offer in the project's own schema: the record the importer writes and the ranking reads."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from tools.gpus import GpuSpec

Interconnect = Literal["nvlink", "pcie", "infinity-fabric", "unknown", "none"]
"""GPU-to-GPU path inside one instance; 'unknown' only in rows written before the importer assumed PCIe."""

PriceOutlier = Literal["spot_below_peers", "price_below_peers"]
"""Why a price is suspicious (tools/catalog/price_trust.py): its spot or on-demand price is far below its peers'."""


class Offer(BaseModel):
    """One rentable GPU instance type in one region (and zone, where the cloud has zones)."""

    model_config = ConfigDict(frozen=True)

    provider: str = Field(description="Catalog cloud id: aws, gcp, lambda, runpod, vast, ...")
    upstream_provider: str | None = Field(
        None,
        description="For aggregators (shadeform, primeintellect): the "
        "underlying provider named by the instance-type prefix.",
    )
    instance_type: str
    region: str | None = None
    zone: str | None = None
    gpu: str = Field(description="Canonical GPU name (tools.gpus), or the catalog's name if not in the spec table.")
    gpu_form_factor: str | None = Field(None, description="'SXM' | 'PCIe' | 'NVL' | ... ; None = unknown.")
    accelerator_name: str | None = Field(None, description="The GPU name as the catalog wrote it.")
    gpu_count: int = Field(ge=1)
    vram_gib_per_gpu: float | None = Field(None, description="Usable GiB per GPU (spec table memory rule).")
    vcpus: float | None = None
    host_ram_gib: float | None = None
    price_per_hour: float | None = Field(
        None, description="On-demand USD/hour, whole instance; None = no on-demand offer."
    )
    spot_price_per_hour: float | None = Field(None, description="Spot USD/hour, whole instance; None = no spot.")
    interconnect: Interconnect = Field(
        description="GPU-to-GPU path inside the instance: 'nvlink' (all GPUs on "
        "NVLink), 'pcie', 'infinity-fabric' (AMD MI300X), 'none' for a "
        "single GPU; 'unknown' only in old rows."
    )
    interconnect_assumed: bool = Field(
        False,
        description="True when nothing in the catalog states the GPU-to-GPU "
        "path and the conservative one (PCIe) was assumed: form "
        "factor unknown, or an NVLink bridge that may be absent.",
    )
    nvlink_gbs: float | None = Field(None, description="Per-GPU NVLink bandwidth, unidirectional GB/s.")
    inter_node_fabric: str | None = Field(None, description="Known inter-node fabric of the instance type.")
    inter_node_gbps_per_gpu: float | None = Field(None, description="Inter-node Gbit/s per GPU, one direction.")
    source: str = Field(description="Where the row came from: '<catalog file>:<line>'.")
    snapshot_date: str = Field(description="Date of the catalog the price comes from (YYYY-MM-DD).")
    on_demand_is_market: bool = Field(
        False,
        description="The provider's 'on-demand' price is a market/auction "
        "price and the instance can be interrupted like spot "
        "(tools/catalog/price_trust.py PROVIDER_PRICING, e.g. mithril).",
    )
    price_outlier: PriceOutlier | None = Field(
        None,
        description="None, or why the price is far below the same "
        "GPU and count elsewhere: 'spot_below_peers' | "
        "'price_below_peers' (unverified: say so).",
    )
    peer_median_price: float | None = Field(
        None,
        description="With price_outlier: the peers' median USD/hour for "
        "the whole instance, same price kind (spot or "
        "on-demand) and GPU count.",
    )

    @property
    def price_per_gpu_hour(self) -> float | None:
        return None if self.price_per_hour is None else self.price_per_hour / self.gpu_count

    @property
    def spot_price_per_gpu_hour(self) -> float | None:
        return None if self.spot_price_per_hour is None else self.spot_price_per_hour / self.gpu_count

    def spec(self) -> GpuSpec | None:
        """The GPU spec table row for this offer's GPU and form factor (default form when unknown)."""
        from tools.gpus import lookup_gpu

        return lookup_gpu(self.gpu, self.gpu_form_factor)
