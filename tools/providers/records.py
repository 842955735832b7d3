"""Provider attributes: billing granularity and minimum, spot notice and interruption behaviour, egress, storage when
stopped, and the inter-node fabric of multi-node instance types.

Data: one record per provider in ``tools/providers/data/<id>.json`` (schema: ``tools/providers/schema.py``), compiled
from ``shared/reference/hardware.md`` §2.2, §3 and §4. A fact that no source gives is ``None`` — never guessed. ``ProviderInfo.sources[field]`` names the source of each fact and
``ProviderInfo.notes[field]`` its caveats. Provider ids are the SkyPilot cloud names (``aws``, ``gcp``, ``lambda``,
``runpod``, ``vast``, ...).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from tools.providers.schema import InterNodeFabric, ProviderRecord

DATA_DIR = Path(__file__).with_name("data")
"""One JSON file per provider, named by its id."""
INFO_FIELDS = (
    "id",
    "display_name",
    "billing_granularity_s",
    "billing_minimum_s",
    "spot_available",
    "spot_notice_s",
    "spot_max_runtime_s",
    "spot_interruption_behavior",
    "spot_interruption_data",
    "egress_usd_per_gb",
    "can_stop",
    "storage_persists_when_stopped",
    "inter_node_fabric",
    "sources",
    "notes",
)
"""The record's fields the `provider_info` tool shows."""


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


def load_records(folder: Path) -> dict[str, ProviderRecord]:
    """Every provider record in `folder` (one `<id>.json` each), validated; ValueError names a bad file."""
    records = {}
    for path in sorted(folder.glob("*.json")):
        try:
            record = ProviderRecord.model_validate_json(path.read_text(encoding="utf-8"))
        except ValueError as error:
            raise ValueError(f"provider record {path.name}: {error}") from None
        if record.id != path.stem:
            raise ValueError(f"provider record {path.name} has id {record.id!r}")
        records[record.id] = record
    return records


@lru_cache(maxsize=1)
def all_records() -> dict[str, ProviderRecord]:
    """The shipped provider records by id."""
    return load_records(DATA_DIR)


@lru_cache(maxsize=1)
def _aliases() -> dict[str, str]:
    return {alias: record.id for record in all_records().values() for alias in record.aliases}


@lru_cache(maxsize=1)
def _providers() -> dict[str, ProviderInfo]:
    return {pid: ProviderInfo(**record.model_dump(include=set(INFO_FIELDS))) for pid, record in all_records().items()}


def provider_aliases() -> dict[str, str]:
    """Other names people use for providers -> provider id ('amazon' -> 'aws')."""
    return dict(_aliases())


def record_of(name: str) -> ProviderRecord | None:
    """The whole record of a provider by id or common name, or None."""
    return all_records().get(normalise_provider(name))


def provider_name_pattern() -> str:
    """A regular expression (JSON Schema and pydantic alike) matching exactly the names `get_provider` knows: ids
    and aliases in any case, spaces anywhere inside a one-word name, blanks around."""

    def spelled(word: str) -> str:
        """`word` in any case, with spaces between its characters unless it has its own spaces."""
        chars = [f"[{c.lower()}{c.upper()}]" if c.isalpha() else re.escape(c) for c in word]
        return (" *" if " " not in word else "").join(chars)

    names = sorted({*_providers(), *_aliases()}, key=lambda name: (-len(name), name))  # the same in every process
    return r"^\s*(?:" + "|".join(spelled(name) for name in names) + r")\s*$"


def normalise_provider(name: str) -> str:
    """Lower-case provider id ('Lambda Labs' -> 'lambda', 'AWS' -> 'aws'); unknown names are lower-cased as is."""
    aliases = _aliases()
    key = name.strip().lower()
    key = aliases.get(key, key)
    return aliases.get(key.replace(" ", ""), key.replace(" ", ""))


def get_provider(name: str) -> ProviderInfo | None:
    """Attributes of a provider by id or common name; None when the provider is not in the table."""
    return _providers().get(normalise_provider(name))


def all_providers() -> list[ProviderInfo]:
    """Every provider's attributes."""
    return list(_providers().values())


def inter_node_fabric(provider: str, instance_type: str | None) -> InterNodeFabric | None:
    """Known inter-node fabric for a provider's instance type (AWS p4d/p5, GCP a3-high/mega, Azure ND v5), or None."""
    info = get_provider(provider)
    return info.fabric_for(instance_type) if info else None
