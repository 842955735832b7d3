"""Topology checker: layouts, collective costs, verdicts, and the monotonicity of communication on PCIe."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contract.jobspec import JobSpec
from tools.jobtime.topology import Candidate, allreduce_s, build_workload, check_topology, gather_s

FULL_8B = build_workload(JobSpec(language="en", model="llama-3.1-8b", method="full_finetune"))
LORA_1B = build_workload(JobSpec(language="en", model="llama-3.2-1b", method="lora"))
FULL_1B = build_workload(JobSpec(language="en", model="llama-3.2-1b", method="full_finetune"))


def test_collective_formulas_follow_nccl_model() -> None:
    """All-reduce moves 2(n-1)/n of the payload, all-gather (n-1)/n; one rank moves nothing."""
    assert allreduce_s(8e9, 8, 100) == pytest.approx(2 * 7 / 8 * 8e9 / 100e9)
    assert gather_s(8e9, 4, 50) == pytest.approx(3 / 4 * 8e9 / 50e9)
    assert allreduce_s(8e9, 1, 100) == 0.0


def test_small_job_fits_on_one_gpu() -> None:
    """LoRA on a 1B model fits one 80 GB GPU with no communication."""
    result = check_topology(LORA_1B, Candidate(gpu="A100-80GB", gpu_count=1))
    assert result.verdict == "fits_single_gpu" and result.runnable
    assert result.comm_s_per_step == 0 and result.per_gpu_gib < result.usable_vram_gib


def test_too_big_job_does_not_fit_and_says_by_how_much() -> None:
    """Full fine-tuning of 8B needs ~16 bytes per parameter: more than one 80 GB card."""
    result = check_topology(FULL_8B, Candidate(gpu="H100", gpu_count=1))
    assert result.verdict == "does_not_fit" and not result.runnable
    assert result.params["needed_gib"] > result.params["usable_gib"]


def test_nvlink_node_beats_pcie_node_for_sharded_training() -> None:
    """8B full fine-tuning over 8 GPUs: communication share is far lower on NVLink than on PCIe."""
    nvlink = check_topology(FULL_8B, Candidate(gpu="A100-80GB", gpu_count=8, interconnect="nvlink"))
    pcie = check_topology(FULL_8B, Candidate(gpu="A100-80GB", form_factor="PCIe", gpu_count=8, interconnect="pcie"))
    assert nvlink.runnable and pcie.runnable
    assert pcie.comm_s_per_step > 3 * nvlink.comm_s_per_step
    assert pcie.verdict == "pcie_comm_bound"
    assert pcie.params["exposed_comm_share"] >= 0.25


def test_tensor_parallel_only_inside_nvlink() -> None:
    """PCIe candidates are never given a tensor-parallel layout; on NVLink it is tried once sharding cannot fit
    (8B full fine-tuning at 32k tokens: ZeRO/FSDP need over 100 GiB per GPU)."""
    long = build_workload(
        JobSpec(
            language="en",
            model="llama-3.1-8b",
            method="full_finetune",
            seq_len=32768,
            micro_batch_size=1,
            gradient_checkpointing=True,
        )
    )
    pcie = check_topology(long, Candidate(gpu="L40S", gpu_count=8, interconnect="pcie"))
    assert all(option.layout != "tensor_parallel" for option in pcie.options)
    nvlink = check_topology(long, Candidate(gpu="H100", gpu_count=8, interconnect="nvlink"))
    assert any(option.layout == "tensor_parallel" for option in nvlink.options)


def test_multi_node_over_slow_ethernet_is_not_advised() -> None:
    """Two 8-GPU nodes joined by 100 Gb/s: communication dominates; 3.2 Tb/s EFA-class fabric does not."""
    slow = check_topology(
        FULL_8B, Candidate(gpu="H100", gpu_count=16, gpus_per_node=8, interconnect="nvlink", inter_node_gbps=100)
    )
    fast = check_topology(
        FULL_8B, Candidate(gpu="H100", gpu_count=16, gpus_per_node=8, interconnect="nvlink", inter_node_gbps=3200)
    )
    assert slow.verdict == "multi_node_slow_fabric" and slow.nodes == 2
    assert fast.verdict == "multi_node_ok"
    assert fast.exposed_comm_share < slow.exposed_comm_share


def test_unknown_interconnect_is_stated() -> None:
    """An offer that does not say how its GPUs are linked gets an assumption, not a silent guess."""
    result = check_topology(FULL_1B, Candidate(gpu="L4", gpu_count=4))
    assert result.link == "pcie"
    assert any("interconnect not stated" in note for note in result.assumptions)


def test_bad_candidate_is_rejected() -> None:
    """Nodes that do not divide the GPU count and unknown GPUs without memory are errors."""
    with pytest.raises(ValueError):
        check_topology(FULL_1B, Candidate(gpu="H100", gpu_count=12, gpus_per_node=8))
    with pytest.raises(ValueError):
        check_topology(FULL_1B, Candidate(gpu="NoSuchGPU", gpu_count=1))
    with pytest.raises(ValueError):
        build_workload(JobSpec(language="en", method="lora"))


@settings(max_examples=25, deadline=None)
@given(
    small=st.integers(2, 8),
    extra=st.integers(1, 8),
    gpu=st.sampled_from(["L40S", "A100-80GB", "RTX4090"]),
    method=st.sampled_from(["full_finetune", "lora"]),
)
def test_more_gpus_on_pcie_never_lower_comm_per_step(small: int, extra: int, gpu: str, method: str) -> None:
    """On a PCIe box each layout's communication per step never falls as GPUs are added (n-1)/n grows."""
    workload = FULL_1B if method == "full_finetune" else LORA_1B
    few = check_topology(workload, Candidate(gpu=gpu, gpu_count=small, interconnect="pcie"))
    many = check_topology(workload, Candidate(gpu=gpu, gpu_count=small + extra, interconnect="pcie"))
    by_layout = {o.layout: o for o in many.options}
    for option in few.options:
        if option.layout in by_layout:
            assert by_layout[option.layout].comm_s >= option.comm_s * (1 - 1e-12)
            if option.comm_share is not None:
                assert by_layout[option.layout].comm_share >= option.comm_share * (1 - 1e-12)


@pytest.mark.parametrize("method", ["full_finetune", "lora", "qlora", "pretrain"])
@pytest.mark.parametrize(
    "candidate",
    [
        {"gpu": "H100", "gpu_count": 8, "interconnect": "nvlink"},
        {"gpu": "L4", "gpu_count": 1},
        {"gpu": "RTX4090", "gpu_count": 4, "interconnect": "pcie"},
        {"gpu": "A10G", "gpu_count": 2, "vram_gib": 22},
        {"gpu": "H200", "gpu_count": 32, "gpus_per_node": 8, "inter_node_gbps": 3200, "inter_node_fabric": "EFA"},
    ],
)
def test_results_built_without_validation_are_what_validation_gives(method, candidate):
    """The search builds its results unvalidated (speed): each must equal the same data validated, field types
    included (an int where a float belongs would dump as 80 instead of 80.0)."""
    workload = build_workload(JobSpec(language="en", model="llama-3.1-8b", method=method, seq_len=3000))
    result = check_topology(workload, Candidate(**candidate))
    validated = type(result).model_validate(result.model_dump())
    assert result.model_dump_json() == validated.model_dump_json()
    assert [type(getattr(result, name)) for name in type(result).model_fields] == [
        type(getattr(validated, name)) for name in type(result).model_fields
    ]
    for option, checked in zip(result.options, validated.options):
        assert [type(v) for v in option.__dict__.values()] == [type(v) for v in checked.__dict__.values()]
