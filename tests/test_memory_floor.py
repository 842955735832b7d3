"""The ranking's memory prefilter (tools.ranking.scale_out.memory_floor_gib) is the estimator's least per-GPU figure
over the layouts it names, for any request, including ones the estimator refuses (a GPU it does not know)."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from tools.jobtime import layout_memory
from tools.jobtime.workload import workload_for_request
from tools.memory import EstimateRequest, estimate
from tools.ranking.rank import _vram_floor, clear_cache
from tools.ranking.scale_out import FLOOR_SHARDINGS, memory_floor_gib


def _reference(request: EstimateRequest, max_gpus: int, max_tp: int) -> float:
    """The floor by its definition: every sharding, every degree up to max_tp on the largest count it divides, each
    through the full estimate; 0.0 when none can be estimated."""
    values = []
    for tp in range(1, max(1, min(max_tp, max_gpus)) + 1):
        for sharding in FLOOR_SHARDINGS:
            update = {"num_gpus": max_gpus - max_gpus % tp, "sharding": sharding, "tensor_parallel": tp}
            try:
                values.append(estimate(request.model_copy(update=update)).per_gpu_gib)
            except ValueError:
                continue
    return min(values, default=math.inf) if values else 0.0


@settings(max_examples=40, deadline=None)
@given(
    model=st.sampled_from(["gpt2", "llama-3.1-8b", "mistral-7b", "qwen2.5-14b", "llama-3-70b", "mixtral-8x7b"]),
    method=st.sampled_from(["full_finetune", "lora", "qlora", "pretrain"]),
    seq_len=st.integers(64, 16384),
    checkpointing=st.booleans(),
    gpu=st.sampled_from([None, "H100", "A100-40GB", "no-such-gpu"]),
    max_gpus=st.integers(1, 64),
    max_tp=st.integers(1, 8),
)
def test_floor_is_the_least_estimate_over_layouts(
    model: str, method: str, seq_len: int, checkpointing: bool, gpu: str | None, max_gpus: int, max_tp: int
) -> None:
    """Same value as the full estimate's minimum, refusals included."""
    request = EstimateRequest(
        model=model, method=method, seq_len=seq_len, gradient_checkpointing=checkpointing, gpu=gpu, micro_batch_size=1
    )
    assert memory_floor_gib(request, max_gpus, max_tp) == _reference(request, max_gpus, max_tp)


@settings(max_examples=30, deadline=None)
@given(
    model=st.sampled_from(["gpt2", "llama-3.1-8b", "qwen2.5-14b", "llama-3-70b", "mixtral-8x7b"]),
    method=st.sampled_from(["full_finetune", "lora", "qlora"]),
    seq_len=st.integers(64, 16384),
    micro=st.sampled_from([1, 2, 8]),
    searched=st.lists(st.tuples(st.integers(1, 64), st.sampled_from(FLOOR_SHARDINGS), st.integers(1, 8)), max_size=30),
    max_gpus=st.integers(1, 512),
    max_tp=st.integers(1, 16),
)
def test_floor_from_a_searched_workload_is_the_same(
    model: str,
    method: str,
    seq_len: int,
    micro: int,
    searched: list[tuple[int, str, int]],
    max_gpus: int,
    max_tp: int,
) -> None:
    """The ranking's floor read from the memory questions a layout search already asked of the workload (other GPU
    counts, other micro-batches) is the estimator's least figure at micro-batch 1, bit for bit."""
    request = EstimateRequest(model=model, method=method, seq_len=seq_len, micro_batch_size=micro)
    workload = workload_for_request(request)
    clear_cache()  # no floor kept from an earlier example: this one is read from this workload's memo
    for replicas, sharding, tp in searched:  # what a search on other geometries left in the memo
        gpus = tp * replicas
        layout_memory(workload, gpus, sharding, tp, workload.gradient_checkpointing, 1)
        layout_memory(workload, gpus, sharding, tp, workload.gradient_checkpointing, micro)
    expected = _reference(request.model_copy(update={"micro_batch_size": 1}), max_gpus, max_tp)
    assert _vram_floor(workload, max_gpus, max_tp, 0.0, 0.0) == expected * 0.999  # no candidate memory: all asked


@settings(max_examples=40, deadline=None)
@given(
    model=st.sampled_from(["gpt2", "llama-3.1-8b", "qwen2.5-14b", "llama-3-70b", "mixtral-8x7b"]),
    method=st.sampled_from(["full_finetune", "lora", "qlora"]),
    seq_len=st.integers(64, 16384),
    max_gpus=st.integers(1, 256),
    max_tp=st.integers(1, 8),
    enough=st.floats(0.0, 200.0),
)
def test_a_floor_that_only_needs_to_reach_enough_stops_there(
    model: str, method: str, seq_len: int, max_gpus: int, max_tp: int, enough: float
) -> None:
    """With `enough`, the least figure when no layout gets within it (every layout asked); otherwise a figure of some
    layout between the least and `enough`."""
    request = EstimateRequest(model=model, method=method, seq_len=seq_len, micro_batch_size=1)
    least = memory_floor_gib(request, max_gpus, max_tp)
    found = memory_floor_gib(request, max_gpus, max_tp, enough=enough)
    if least > enough:
        assert found == least
    else:
        assert least <= found <= enough


def test_the_ranking_floor_stops_at_the_smallest_candidate() -> None:
    """A job every candidate holds asks the floor fewer layouts, and its floor keeps every candidate of known memory,
    as the exact floor does; a job no candidate can hold asks all of them and gets the exact floor."""
    small = workload_for_request(EstimateRequest(model="llama-3.2-1b", method="lora", micro_batch_size=1))
    asked: list[int] = []
    clear_cache()
    exact = _vram_floor(small, 64, 8, 0.05, 0.0)
    asked.append(len(small.memory_cache))
    small = workload_for_request(EstimateRequest(model="llama-3.2-1b", method="lora", micro_batch_size=1))
    clear_cache()
    early = _vram_floor(small, 64, 8, 0.05, 16.0)
    asked.append(len(small.memory_cache))
    assert exact <= early <= 16.0 and asked[1] < asked[0]
    big = workload_for_request(EstimateRequest(model="llama-3-70b", method="full_finetune", micro_batch_size=1))
    clear_cache()
    assert _vram_floor(big, 8, 8, 0.05, 0.5) == _vram_floor(big, 8, 8, 0.05, 0.0)
