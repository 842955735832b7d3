"""Everything known about each provider, one record per provider (tools/providers/data/<id>.json, schema in
tools/providers/schema.py): billing granularity and minimum, spot notice and interruption behaviour, egress, storage
when stopped, the inter-node fabric of multi-node instance types, pricing semantics, how its catalog rows read,
whether its spot capacity is a marketplace, and its SkyPilot cloud. Adding a provider is one file.
"""

from tools.providers.records import (
    DATA_DIR,
    ProviderInfo,
    all_records,
    all_providers,
    get_provider,
    inter_node_fabric,
    load_records,
    normalise_provider,
    provider_aliases,
    record_of,

)
from tools.providers.schema import CatalogQuirks, FormFactorRule, InterNodeFabric, Pricing, ProviderRecord

from tools.providers.records import provider_name_pattern

__all__ = ["provider_name_pattern", "DATA_DIR", "CatalogQuirks", "FormFactorRule", "InterNodeFabric", "Pricing", "ProviderInfo", "ProviderRecord", "all_records",
           "all_providers", "get_provider", "inter_node_fabric", "load_records", "normalise_provider",
           "provider_aliases", "record_of"]
