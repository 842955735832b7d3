"""Provider attributes: billing granularity and minimum, spot notice and interruption behaviour, egress, storage when
stopped, and the inter-node fabric of multi-node instance types.
"""

from tools.providers.records import PROVIDER_ALIASES, ProviderInfo, all_providers, get_provider, inter_node_fabric, normalise_provider

__all__ = ['PROVIDER_ALIASES', 'ProviderInfo', 'all_providers', 'get_provider', 'inter_node_fabric', 'normalise_provider']
