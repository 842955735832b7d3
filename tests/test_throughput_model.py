"""Step-time model (tools/jobtime/micro_step.py): hand-worked values and monotonicity properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contract.jobspec import JobSpec
from tools.gpus import lookup_gpu
from tools.jobtime.micro_step import CALIBRATION, StepShape, step_compute
from tools.jobtime.throughput import TokenFlops, flops_per_token
from tools.jobtime.topology import Candidate, build_workload, check_topology
from tools.models.registry import resolve

H100 = lookup_gpu("H100")


def _shape(**changes: object) -> StepShape:
    """A 7B-like micro-step: 4096 tokens, hidden 4096, 32 layers, 32k vocabulary, full training, no recompute."""
    base = dict(
        tokens=4096,
        hidden=4096,
        layers=32,
        vocab=32000,
        tensor_parallel=1,
        method="full_finetune",
        checkpointing=False,
        flops=TokenFlops(total=7.2e10, dense=6.0e10, attention=1.2e10, recompute=0.0, adapters=0.0),
    )
    return StepShape(**(base | changes))


def test_step_time_matches_hand_arithmetic() -> None:
    """matmuls at ceiling·h/(h+H0)·t/(t+T0), attention at ceiling·share, memory-bound bytes at 3.35 TB/s."""
    cal = CALIBRATION
    ceiling = cal.ceiling["H100"]
    efficiency = ceiling * 4096 / (4096 + cal.hidden_half) * 4096 / (4096 + cal.tokens_half)
    matmul = 4096 * 6.0e10 / (989e12 * efficiency)
    attention = 4096 * 1.2e10 / (989e12 * ceiling * cal.attention_share)
    memory = 4096 * (cal.layer_bytes * 32 * 4096 * 2 + cal.vocab_bytes * 32000) / 3.35e12
    result = step_compute(_shape(), H100, "amp_bf16")
    assert result.matmul_s == pytest.approx(matmul, rel=1e-9)
    assert result.attention_s == pytest.approx(attention, rel=1e-9)
    assert result.memory_s == pytest.approx(memory, rel=1e-9)
    assert result.seconds == pytest.approx(matmul + attention + memory, rel=1e-9)
    assert result.utilisation.value == pytest.approx(4096 * 7.2e10 / (matmul + attention + memory) / 989e12, abs=1e-4)


def test_qlora_dequantisation_is_per_micro_step_at_memory_bandwidth() -> None:
    """QLoRA adds passes × params × 2.5 bytes / bandwidth (2 passes without recompute) to the LoRA step."""
    lora = step_compute(_shape(method="lora", adapter_width=1e6), H100, "bf16")
    qlora = step_compute(_shape(method="qlora", adapter_width=1e6, quantized_params=7_000_000_000), H100, "bf16")
    expected = CALIBRATION.dequant_passes * 2 * 7e9 * 2.5 / 3.35e12
    assert qlora.seconds - lora.seconds == pytest.approx(expected, rel=1e-9)


def test_unknown_tensor_speed_gives_no_time() -> None:
    """FP32 training has no dense tensor TFLOPS in the table: no time rather than a guess."""
    assert step_compute(_shape(), H100, "fp32") is None


@settings(max_examples=25, deadline=None)
@given(
    tokens=st.sampled_from([2048, 8192, 32768]),
    short=st.sampled_from([256, 1024, 2048]),
    factor=st.sampled_from([2, 4, 8]),
    method=st.sampled_from(["full_finetune", "lora"]),
    ckpt=st.booleans(),
    gpu=st.sampled_from(["H100", "A100-80GB", "L40S", "L4"]),
)
def test_longer_sequences_never_give_more_tokens_per_second(
    tokens: int, short: int, factor: int, method: str, ckpt: bool, gpu: str
) -> None:
    """At the same tokens per micro-step, a longer sequence only adds attention work."""
    arch = resolve("llama-3.1-8b")
    card = lookup_gpu(gpu)
    times = []
    for seq in (short, short * factor):
        flops = flops_per_token(
            arch, method=method, seq_len=seq, gradient_checkpointing=ckpt, trainable_params=arch.total_params
        )
        shape = _shape(
            tokens=tokens,
            hidden=arch.hidden,
            layers=arch.layers,
            vocab=arch.vocab,
            method=method,
            checkpointing=ckpt,
            flops=flops,
        )
        times.append(step_compute(shape, card, "bf16").seconds)
    assert times[1] >= times[0]


@settings(max_examples=25, deadline=None)
@given(
    tokens=st.integers(min_value=64, max_value=65536),
    hidden=st.integers(min_value=64, max_value=16384),
    ckpt=st.booleans(),
    gpu=st.sampled_from(["H100", "H200", "A100-40GB", "B200", "RTX4090", "T4", "MI300X"]),
)
def test_utilisation_stays_below_the_ceiling_and_faster_memory_never_slows(
    tokens: int, hidden: int, ckpt: bool, gpu: str
) -> None:
    """Achieved share of peak is positive and below 1; an H200 (H100 compute, more bandwidth) is never slower."""
    shape = _shape(tokens=tokens, hidden=hidden, checkpointing=ckpt)
    result = step_compute(shape, lookup_gpu(gpu), "bf16")
    assert 0.0 < result.utilisation.value < 1.0
    assert step_compute(shape, lookup_gpu("H200"), "bf16").seconds <= step_compute(shape, H100, "bf16").seconds


@settings(max_examples=12, deadline=None)
@given(
    model=st.sampled_from(["llama-3.2-1b", "qwen2.5-0.5b", "llama-3.1-8b"]),
    method=st.sampled_from(["full_finetune", "lora", "qlora"]),
    counts=st.sampled_from([(1, 2), (2, 4), (4, 8), (1, 8)]),
)
def test_more_gpus_never_lower_total_throughput(model: str, method: str, counts: tuple[int, int]) -> None:
    """On one NVLink node, adding GPUs never lowers the job's total tokens per second."""
    workload = build_workload(JobSpec(language="en", model=model, method=method))
    totals = []
    for count in counts:
        result = check_topology(workload, Candidate(gpu="H100", gpu_count=count, interconnect="nvlink"))
        if not result.runnable:
            totals.append(0.0)
            continue
        step = result.compute_s_per_step + result.exposed_comm_s_per_step
        totals.append(result.micro_batch_size * workload.seq_len * count / result.tensor_parallel / step)
    assert totals[1] >= totals[0]
