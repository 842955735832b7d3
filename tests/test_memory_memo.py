"""The memory model's memoisation (issue 27): equal shapes and setups hash alike, the caches are bounded, and a
memoised answer equals the one computed afresh."""

from __future__ import annotations

import dataclasses

import pytest

from tools.memory import EstimateRequest, per_gpu_gib
from tools.memory.peak import _qlora_recipe, allocation, overhead_bytes, peak_terms, per_gpu_bytes, resolved
from tools.memory.setup import build_setup, lora_params, resolve_arch
from tools.models import ModelArch, lookup


def _fresh(arch: ModelArch) -> ModelArch:
    """An equal shape built anew (no cached counts)."""
    return dataclasses.replace(arch)


@pytest.mark.parametrize("model", ["llama-3.1-8b", "mixtral-8x7b", "qwen2.5-14b", "gpt2"])
def test_equal_shapes_hash_and_compare_alike(model: str) -> None:
    arch = lookup(model)
    assert arch is not None
    copy = _fresh(arch)
    assert copy == arch and hash(copy) == hash(arch)
    assert hash(arch) == hash(tuple(getattr(arch, f.name) for f in dataclasses.fields(arch)))
    other = dataclasses.replace(arch, layers=arch.layers + 1)
    assert other != arch and other.total_params != arch.total_params  # a changed field is a new shape


def test_cached_counts_follow_the_fields() -> None:
    arch = lookup("llama-3.1-8b")
    assert arch is not None
    first = arch.total_params
    wider = dataclasses.replace(arch, hidden=arch.hidden * 2)
    assert wider.total_params > first and arch.total_params == first


@pytest.mark.parametrize("method", ["full_finetune", "lora", "qlora"])
def test_memoised_answer_equals_a_fresh_one(method: str) -> None:
    request = EstimateRequest(model="llama-3.1-8b", method=method, seq_len=3001, num_gpus=4, sharding="fsdp")
    first = per_gpu_gib(request)
    for memo in (per_gpu_bytes, _qlora_recipe, lora_params):
        memo.cache_clear()
    assert per_gpu_gib(request) == first
    setup = build_setup(request, resolve_arch(request))
    again = build_setup(request, resolve_arch(request))
    assert setup == again and hash(setup) == hash(again)
    assert per_gpu_bytes(again) == per_gpu_bytes(setup)


def test_caches_are_bounded() -> None:
    for memo in (per_gpu_bytes, _qlora_recipe, lora_params):
        assert memo.cache_info().maxsize is not None
    for seq in range(100, 100 + per_gpu_bytes.cache_info().maxsize + 50):  # type: ignore[operator]
        per_gpu_gib(EstimateRequest(model="gpt2", seq_len=seq))
    assert per_gpu_bytes.cache_info().currsize <= per_gpu_bytes.cache_info().maxsize  # type: ignore[operator]


@pytest.mark.parametrize("method", ["full_finetune", "lora", "qlora"])
@pytest.mark.parametrize("sharding", ["none", "ddp", "zero2", "zero3", "fsdp"])
@pytest.mark.parametrize("checkpointing", [True, False])
def test_one_pass_allocation_equals_the_explained_terms(method: str, sharding: str, checkpointing: bool) -> None:
    """per_gpu_bytes' one-pass sum (model states and activations computed once) is, bit for bit, the explained
    estimate's: the peak terms plus overhead_bytes, each computing them on its own."""
    gpus = 1 if sharding == "none" else 8
    for seq in (517, 4096):
        request = EstimateRequest(
            model="qwen2.5-14b",
            method=method,
            seq_len=seq,
            micro_batch_size=2,
            num_gpus=gpus,
            sharding=sharding,
            gradient_checkpointing=checkpointing,
        )
        setup = resolved(build_setup(request, resolve_arch(request)))
        terms, _phase, _host, _trainable = peak_terms(setup)
        allocated = sum(terms.values())
        assert allocation(setup) == (allocated, overhead_bytes(allocated, setup))
