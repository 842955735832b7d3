"""Job time and cost: FLOPs per token, tokens from the spec, billing rounding."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contract.jobspec import JobSpec
from tools.gpus import lookup_gpu
from tools.jobtime.micro_step import ceiling_for
from tools.jobtime.throughput import flops_per_token, matmul_params
from tools.jobtime.timing import job_time, job_tokens, run_cost
from tools.jobtime.topology import Candidate, build_workload, check_topology
from tools.models.registry import resolve
from tools.spot.completion import Billing

ARCH = resolve("llama-3.1-8b")


def test_full_training_is_6n_plus_attention_and_lora_drops_weight_gradients() -> None:
    """Full: 6N + 12·L·H·T; LoRA: 4N + the same attention + 6 × adapters; recompute adds 2N + 4·L·H·T."""
    n, attn = matmul_params(ARCH), 12.0 * ARCH.layers * ARCH.q_dim * 2048
    full = flops_per_token(
        ARCH, method="full_finetune", seq_len=2048, gradient_checkpointing=False, trainable_params=ARCH.total_params
    )
    lora = flops_per_token(ARCH, method="lora", seq_len=2048, gradient_checkpointing=False, trainable_params=1000)
    ckpt = flops_per_token(
        ARCH, method="full_finetune", seq_len=2048, gradient_checkpointing=True, trainable_params=ARCH.total_params
    )
    assert full.total == pytest.approx(6 * n + attn)
    assert lora.total == pytest.approx(4 * n + attn + 6000)
    assert ckpt.total - full.total == pytest.approx(2 * n + attn / 3)


def test_moe_counts_active_parameters() -> None:
    """Mixtral's per-token FLOPs follow its ~13B active, not its ~47B total parameters."""
    mixtral = resolve("mixtral-8x7b")
    assert matmul_params(mixtral) < 0.35 * mixtral.total_params


def test_utilisation_comes_with_a_source() -> None:
    """Hopper and Ampere ceilings are fitted on published runs; an unmeasured GPU gets a stated assumption."""
    assert "fitted" in ceiling_for(lookup_gpu("H100"))[1]
    assert "fitted" in ceiling_for(lookup_gpu("A100-80GB"))[1]
    assert "assumption" in ceiling_for(lookup_gpu("L4"))[1]


def test_tokens_from_dataset_examples_and_defaults() -> None:
    """Tokens × epochs; examples × stated length; nothing given -> a stated default."""
    assert job_tokens(JobSpec(language="en", dataset_tokens=1000, epochs=3), seq_len=2048, total_params=1).total == 3000
    examples = job_tokens(JobSpec(language="en", dataset_examples=100, epochs=2), seq_len=256, total_params=1)
    assert examples.total == 100 * 256 * 2 and examples.assumptions
    default = job_tokens(JobSpec(language="en", method="lora"), seq_len=2048, total_params=1)
    assert default.total > 0 and "Alpaca" in default.assumptions[0]
    pretrain = job_tokens(JobSpec(language="en", method="pretrain"), seq_len=2048, total_params=10**9)
    assert pretrain.total == 20 * 10**9


def test_job_hours_scale_with_tokens_and_shrink_on_faster_gpus() -> None:
    """Twice the data takes twice as long; an H100 is faster than an A100 for the same job."""
    spec = JobSpec(language="en", model="llama-3.2-1b", method="lora", dataset_tokens=10**7)
    workload = build_workload(spec)
    tokens = job_tokens(spec, seq_len=workload.seq_len, total_params=workload.total_params)
    double = job_tokens(
        spec.model_copy(update={"dataset_tokens": 2 * 10**7}),
        seq_len=workload.seq_len,
        total_params=workload.total_params,
    )
    a100 = check_topology(workload, Candidate(gpu="A100-80GB", gpu_count=1))
    h100 = check_topology(workload, Candidate(gpu="H100", gpu_count=1))
    assert job_time(workload, a100, double).hours == pytest.approx(2 * job_time(workload, a100, tokens).hours)
    assert job_time(workload, h100, tokens).hours < job_time(workload, a100, tokens).hours


def test_hourly_billing_rounds_up_and_minimum_applies() -> None:
    """61 minutes on hourly billing is 2 hours; 10 s with a 60 s minimum is 60 s."""
    assert run_cost(61 / 60, 3.0, Billing(granularity_s=3600)).cost_usd == pytest.approx(6.0)
    assert run_cost(10 / 3600, 3600.0, Billing(granularity_s=1, minimum_s=60)).cost_usd == pytest.approx(60.0)
    with pytest.raises(ValueError):
        run_cost(1.0, -1.0, Billing())


@settings(max_examples=60, deadline=None)
@given(
    hours=st.floats(0, 10_000),
    price=st.floats(0, 500),
    gran=st.sampled_from([1.0, 60.0, 3600.0]),
    minimum=st.sampled_from([0.0, 60.0, 300.0]),
    instances=st.integers(1, 8),
)
def test_cost_never_below_price_times_hours(
    hours: float, price: float, gran: float, minimum: float, instances: int
) -> None:
    """Billing only ever rounds up."""
    cost = run_cost(hours, price, Billing(granularity_s=gran, minimum_s=minimum), instances=instances)
    assert cost.cost_usd >= price * hours * instances * (1 - 1e-9)
    assert cost.billed_hours >= hours * (1 - 1e-12)
