"""Layouts people run: data parallel first, smaller micro-batches before tensor parallelism, TP at every degree that
divides the heads and only when sharding cannot fit or scale (issue 24)."""

from __future__ import annotations

import pytest

from contract.jobspec import JobSpec
from tools.jobtime.topology import Candidate, build_workload, check_topology
from tools.models.registry import resolve

NODE = Candidate(gpu="H100", gpu_count=8, interconnect="nvlink")


@pytest.mark.parametrize("model", ["llama-3.2-1b", "llama-3.2-3b", "llama-2-7b", "qwen2.5-7b", "mistral-7b"])
@pytest.mark.parametrize("method", ["full_finetune", "lora", "qlora"])
def test_small_models_on_an_80gb_node_are_data_parallel(model: str, method: str) -> None:
    """A 1-7B model on 8x 80 GB runs DDP, ZeRO-2 or FSDP: never tensor parallel."""
    result = check_topology(build_workload(JobSpec(language="en", model=model, method=method)), NODE)
    assert result.runnable and result.layout in ("ddp", "zero2", "fsdp"), result.layout
    assert result.tensor_parallel == 1


def test_stated_micro_batch_that_does_not_fit_shrinks_before_tensor_parallel() -> None:
    """Llama 2 7B, micro-batch 6, no checkpointing: ~103 GiB per GPU under FSDP (the HF implementation keeps an fp32
    residual stream), so the tool keeps sharding with a smaller micro-batch and says so, instead of TP=8."""
    spec = JobSpec(
        language="en", model="llama-2-7b", method="full_finetune", micro_batch_size=6, gradient_checkpointing=False
    )
    result = check_topology(build_workload(spec), NODE)
    assert result.layout in ("zero2", "fsdp") and result.tensor_parallel == 1
    assert result.micro_batch_size is not None and result.micro_batch_size < 6
    assert result.gradient_checkpointing is False
    assert result.per_gpu_gib <= result.usable_vram_gib
    assert any("micro-batch" in note and "global batch" in note for note in result.assumptions)


def test_tensor_parallel_degrees_divide_the_heads() -> None:
    """Qwen2.5-7B has 28 query and 4 KV heads: TP 2 and 4 are tried, 8 (28 % 8 = 4) never is."""
    arch = resolve("qwen2.5-7b")
    assert (arch.heads, arch.kv_heads) == (28, 4)
    long = JobSpec(
        language="en",
        model="qwen2.5-7b",
        method="full_finetune",
        seq_len=32768,
        micro_batch_size=1,
        gradient_checkpointing=True,
    )
    result = check_topology(build_workload(long), NODE)
    degrees = {o.tensor_parallel for o in result.options if o.layout == "tensor_parallel"}
    assert degrees == {2, 4}
    spec = long.model_copy(update={"seq_len": 16384})
    four = check_topology(build_workload(spec), Candidate(gpu="H100", gpu_count=4, interconnect="nvlink"))
    assert four.runnable and four.layout == "tensor_parallel" and four.tensor_parallel == 4


def test_every_dividing_degree_is_considered_not_only_the_largest() -> None:
    """8B at 32k tokens on 8x H100: sharding cannot fit; TP 4 (2 replicas) fits and is faster than TP 8."""
    spec = JobSpec(
        language="en",
        model="llama-3.1-8b",
        method="full_finetune",
        seq_len=32768,
        micro_batch_size=1,
        gradient_checkpointing=True,
    )
    result = check_topology(build_workload(spec), NODE)
    tp = {o.tensor_parallel: o for o in result.options if o.layout == "tensor_parallel"}
    assert set(tp) == {2, 4, 8}
    assert not any(o.fits for o in result.options if o.layout != "tensor_parallel")
    assert result.layout == "tensor_parallel" and result.tensor_parallel == 4


def test_qlora_70b_on_two_gpus_is_data_parallel() -> None:
    """QLoRA of a 70B fits each 80 GB GPU whole (4-bit base ~35 GiB): two GPUs run DDP, not tensor parallelism."""
    spec = JobSpec(language="en", model="llama-3.1-70b", method="qlora")
    result = check_topology(build_workload(spec), Candidate(gpu="H100", gpu_count=2, interconnect="nvlink"))
    assert result.layout == "ddp" and result.tensor_parallel == 1


def test_ties_go_to_the_simpler_layout() -> None:
    """LoRA on a 1B model over 2 GPUs: DDP and ZeRO-2 are about as fast (tiny adapter gradients); DDP is chosen."""
    spec = JobSpec(language="en", model="llama-3.2-1b", method="lora")
    result = check_topology(build_workload(spec), Candidate(gpu="A100-80GB", gpu_count=2, interconnect="nvlink"))
    assert result.layout == "ddp"
