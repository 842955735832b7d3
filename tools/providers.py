"""Provider attributes: billing granularity and minimum, spot notice and interruption behaviour, egress, storage when
stopped, and the inter-node fabric of multi-node instance types.

Data: ``tools/data/providers.json``, compiled from ``shared/reference/hardware.md`` §2.2, §3 and §4. A fact that no
source gives is ``None`` — never guessed. ``ProviderInfo.sources[field]`` names the source of each fact and
``ProviderInfo.notes[field]`` its caveats. Provider ids are the SkyPilot cloud names (``aws``, ``gcp``, ``lambda``,
``runpod``, ``vast``, ...).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

DATA_FILE = Path(__file__).parent / "data" / "providers.json"


class InterNodeFabric(BaseModel):
    """The network between nodes of a multi-node instance type."""

    model_config = ConfigDict(frozen=True)

    pattern: str = Field(description="Regular expression matched against the instance type.")
    fabric: str = Field(description="What it is, e.g. 'EFA v2 32x100 Gb/s'.")
    node_gbps: float = Field(description="Total inter-node bandwidth per node, Gbit/s, one direction.")
    per_gpu_gbps: float = Field(description="Inter-node bandwidth per GPU, Gbit/s, one direction.")
    source: str

    @property
    def per_gpu_gbs(self) -> float:
        """Inter-node bandwidth per GPU in GB/s (bytes), what collective-cost formulas want."""
        return self.per_gpu_gbps / 8

    def matches(self, instance_type: str) -> bool:
        return re.search(self.pattern, instance_type) is not None


class ProviderInfo(BaseModel):
    """What a provider's docs say about billing, spot, storage and networking."""

    model_config = ConfigDict(frozen=True)

    id: str
    display_name: str
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
    sources: dict[str, str] = Field(default_factory=dict)
    notes: dict[str, str] = Field(default_factory=dict)

    def source_of(self, field: str) -> str | None:
        """Source of one fact, or None when the fact is unknown."""
        return self.sources.get(field)

    def fabric_for(self, instance_type: str | None) -> InterNodeFabric | None:
        """Known inter-node fabric of an instance type, or None."""
        if not instance_type:
            return None
        return next((f for f in self.inter_node_fabric if f.matches(instance_type)), None)

    def billed_seconds(self, seconds: float) -> float | None:
        """Seconds billed for a run of `seconds`, after the minimum and the granularity; None if unknown."""
        if self.billing_granularity_s is None:
            return None
        billed = max(seconds, float(self.billing_minimum_s or 0))
        step = self.billing_granularity_s
        return float(-(-billed // step) * step)


_ALIASES = {"amazon": "aws", "ec2": "aws", "google": "gcp", "gce": "gcp", "lambdalabs": "lambda",
            "lambda-labs": "lambda", "lambda cloud": "lambda", "vastai": "vast", "vast.ai": "vast",
            "microsoft": "azure", "thunder": "thundercompute", "prime intellect": "primeintellect"}


@lru_cache(maxsize=1)
def _providers() -> dict[str, ProviderInfo]:
    data = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    return {row["id"]: ProviderInfo(**row) for row in data["providers"]}


def provider_name_pattern() -> str:
    """A regular expression (JSON Schema and pydantic alike) matching exactly the names `get_provider` knows: ids
    and aliases in any case, spaces anywhere inside a one-word name, blanks around."""
    def spelled(word: str) -> str:
        """`word` in any case, with spaces between its characters unless it has its own spaces."""
        chars = [f"[{c.lower()}{c.upper()}]" if c.isalpha() else re.escape(c) for c in word]
        return (" *" if " " not in word else "").join(chars)

    names = sorted({*_providers(), *_ALIASES}, key=lambda name: (-len(name), name))  # the same in every process
    return r"^\s*(?:" + "|".join(spelled(name) for name in names) + r")\s*$"


def normalise_provider(name: str) -> str:
    """Lower-case provider id ('Lambda Labs' -> 'lambda', 'AWS' -> 'aws'); unknown names are lower-cased as is."""
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    return _ALIASES.get(key.replace(" ", ""), key.replace(" ", ""))


def get_provider(name: str) -> ProviderInfo | None:
    """Attributes of a provider by id or common name; None when the provider is not in the table."""
    return _providers().get(normalise_provider(name))


def all_providers() -> list[ProviderInfo]:
    return list(_providers().values())


def inter_node_fabric(provider: str, instance_type: str | None) -> InterNodeFabric | None:
    """Known inter-node fabric for a provider's instance type (AWS p4d/p5, GCP a3-high/mega, Azure ND v5), or None."""
    info = get_provider(provider)
    return info.fabric_for(instance_type) if info else None
