"""The fit limits (largest micro-batch and sequence length that fit) equal plain bisection's, over models, methods,
shardings and memory sizes, in a fraction of its estimates (issue 27: two estimates with fit limits per new job)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tools.memory.fit_search as fit_search
from tools.memory import EstimateRequest
from tools.memory.fit_search import largest_fitting
from tools.memory.peak import per_gpu_bytes, with_changes
from tools.memory.request import GIB
from tools.memory.setup import Setup, build_setup, resolve_arch


def _bisection(setup: Setup, field: str, vram_bytes: float, upper: int) -> int | None:
    """The reference: the largest fitting value by plain bisection (monotone memory)."""
    if per_gpu_bytes(with_changes(setup, **{field: 1})) > vram_bytes:
        return None
    low, high = 1, upper
    if per_gpu_bytes(with_changes(setup, **{field: high})) <= vram_bytes:
        return high
    while high - low > 1:
        mid = (low + high) // 2
        if per_gpu_bytes(with_changes(setup, **{field: mid})) <= vram_bytes:
            low = mid
        else:
            high = mid
    return low


def _setup(model: str, method: str, sharding: str, checkpointing: bool, seq: int, batch: int) -> Setup:
    """The stated setup of one request."""
    request = EstimateRequest(
        model=model,
        method=method,
        seq_len=seq,
        micro_batch_size=batch,
        num_gpus=1 if sharding == "none" else 8,
        sharding=sharding,
        gradient_checkpointing=checkpointing,
    )
    return build_setup(request, resolve_arch(request))


@settings(max_examples=60, deadline=None)
@given(
    model=st.sampled_from(["llama-3.2-1b", "llama-3.1-8b", "qwen2.5-14b", "mixtral-8x7b", "gpt2"]),
    method=st.sampled_from(["full_finetune", "lora", "qlora"]),
    sharding=st.sampled_from(["none", "ddp", "zero2", "zero3", "fsdp"]),
    checkpointing=st.booleans(),
    seq=st.integers(64, 16_384),
    batch=st.integers(1, 16),
    vram_gib=st.floats(4.0, 200.0),
)
def test_fit_limits_equal_bisection(
    model: str, method: str, sharding: str, checkpointing: bool, seq: int, batch: int, vram_gib: float
) -> None:
    setup = _setup(model, method, sharding, checkpointing, seq, batch)
    vram = vram_gib * GIB
    for field, upper in (("batch", 65_536), ("seq", 4 * 1024 * 1024)):
        assert largest_fitting(setup, field, vram, upper) == _bisection(setup, field, vram, upper)


@pytest.mark.parametrize("method", ["full_finetune", "lora", "qlora"])
def test_far_fewer_estimates_than_bisection(method: str, monkeypatch: pytest.MonkeyPatch) -> None:
    setup = _setup("qwen2.5-14b", method, "fsdp" if method == "full_finetune" else "none", True, 2048, 1)
    probes: list[int] = []
    real = fit_search.per_gpu_bytes

    def counted(value: Setup) -> float:
        probes.append(1)
        return real(value)

    monkeypatch.setattr(fit_search, "per_gpu_bytes", counted)
    found = largest_fitting(setup, "seq", 80 * GIB, 4 * 1024 * 1024)
    assert found is not None and found > 2048
    assert len(probes) <= 12, f"{len(probes)} estimates (bisection takes ~24)"
