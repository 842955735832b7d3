"""Everything known about each provider, one record per provider (tools/providers/data/<id>.json, schema in
tools/providers/schema.py): billing granularity and minimum, spot notice and interruption behaviour, egress, storage
when stopped, the inter-node fabric of multi-node instance types, pricing semantics, how its catalog rows read,
whether its spot capacity is a marketplace, and its SkyPilot cloud. Adding a provider is one file.
"""

from tools.providers.records import (
    DATA_DIR,
    ProviderInfo,
    all_providers,
    all_records,
    get_provider,
    inter_node_fabric,
    load_records,
    normalise_provider,
    provider_aliases,
    provider_name_pattern,
    record_of,
)
from tools.providers.schema import CatalogQuirks, FormFactorRule, InterNodeFabric, Pricing, ProviderRecord

__all__ = [
    "DATA_DIR",
    "CatalogQuirks",
    "FormFactorRule",
    "InterNodeFabric",
    "Pricing",
    "ProviderInfo",
    "ProviderRecord",
    "all_providers",
    "all_records",
    "get_provider",
    "inter_node_fabric",
    "load_records",
    "normalise_provider",
    "provider_aliases",
    "provider_name_pattern",
    "record_of",
]
