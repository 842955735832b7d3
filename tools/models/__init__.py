"""Model registry: architecture shapes of the models people train (tools/data/models.json), exact parameter
counts, forgiving name lookup, and a generic decoder for a size with no name.
"""

from tools.models.registry import (
    ModelArch,
    all_models,
    fuzzy_lookup,
    generic_decoder,
    load_hf_config,
    lookup,
    resolve,
    size_from_name,
)

__all__ = [
    "ModelArch",
    "all_models",
    "fuzzy_lookup",
    "generic_decoder",
    "load_hf_config",
    "lookup",
    "resolve",
    "size_from_name",
]
