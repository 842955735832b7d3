"""tools/memory/cache.py: the chat's layout estimates come from memory for a repeated request, equal to a fresh
estimate, never shared between callers, and never cached for a config file or an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.memory import cache as estimate_cache
from tools.memory.estimator import EstimateRequest, estimate


def request(**values: object) -> EstimateRequest:
    """A LoRA request on a registry model unless told otherwise."""
    base: dict[str, object] = {"model": "llama-3.1-8b", "method": "lora", "num_gpus": 2, "sharding": "fsdp"}
    base.update(values)
    return EstimateRequest(**base)


def test_repeated_request_equals_a_fresh_estimate_and_is_a_copy() -> None:
    """Same figures as estimate(); changing what one caller got does not change what the next one gets."""
    estimate_cache.clear()
    first = estimate_cache.cached_estimate(request())
    assert first.model_dump() == estimate(request()).model_dump()
    first.assumptions.append("changed by a caller")
    first.per_gpu_gib = -1.0
    second = estimate_cache.cached_estimate(request())
    assert second.model_dump() == estimate(request()).model_dump()
    assert estimate_cache.cached_estimate(request(num_gpus=4)).per_gpu_gib != second.per_gpu_gib


def test_config_file_is_read_again_each_time(tmp_path: Path) -> None:
    """A request naming a config.json is not cached: an edited file gives a new estimate."""
    config = tmp_path / "config.json"
    shape = {
        "model_type": "llama",
        "hidden_size": 2048,
        "intermediate_size": 8192,
        "num_hidden_layers": 16,
        "num_attention_heads": 16,
        "num_key_value_heads": 8,
        "vocab_size": 32000,
    }
    config.write_text(json.dumps(shape))
    small = estimate_cache.cached_estimate(request(model=None, config_path=str(config)))
    config.write_text(json.dumps(shape | {"num_hidden_layers": 32}))
    large = estimate_cache.cached_estimate(request(model=None, config_path=str(config)))
    assert large.total_params > small.total_params


def test_errors_are_not_cached() -> None:
    """A request the estimator refuses raises every time."""
    bad = request(model="no-such-model-xyz", params_b=None)
    for _ in range(2):
        with pytest.raises(ValueError):
            estimate_cache.cached_estimate(bad)
