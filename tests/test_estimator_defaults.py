"""Estimator defaults and the optimizer implementation: one set of defaults for the CLI and the chat, fused AdamW
(the current Hugging Face Trainer default) without a step temporary, QLoRA never above LoRA."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contract.jobspec import JobSpec
from tools.memory.estimator import (
    DEFAULTS,
    GIB,
    EstimateRequest,
    estimate,
    estimate_for_spec,
    request_for_spec,
)
from tools.models.registry import all_models, resolve

STEP = {
    "model": "llama-2-7b",
    "method": "full_finetune",
    "precision": "amp_bf16",
    "micro_batch_size": 1,
    "seq_len": 16,
    "gradient_checkpointing": True,
    "optimizer": "adamw",
}


def test_llama_3_2_1b_full_finetune_on_a_4090_with_fused_adamw():
    """Issue 10: 25.2 GiB with a foreach temporary the HF Trainer no longer allocates; under the card's 23.99 GiB
    but above the one 95 % fit threshold (issue 24), so the fit check says no, as recommend does."""
    result = estimate(EstimateRequest(model="llama-3.2-1b", gradient_checkpointing=True, seq_len=1024, gpu="RTX4090"))
    assert result.fit is not None and result.fit.fits is (result.per_gpu_gib <= 23.99 * 0.95)
    assert 20.0 < result.per_gpu_gib < 23.5
    assert result.breakdown_gib["temporary"] == 0.0


def test_fused_is_the_default_and_foreach_adds_one_state_sized_temporary():
    """Pure bf16 AdamW: 2 + 2 + 4 B/param of states; the foreach step adds one state (2 B/param), fused nothing."""
    params = resolve("llama-2-7b").total_params
    fused = estimate(EstimateRequest(**STEP | {"precision": "bf16"}))
    foreach = estimate(EstimateRequest(**STEP | {"precision": "bf16"}, optimizer_impl="foreach"))
    assert DEFAULTS.optimizer_impl == "fused"
    assert fused.allocated_gib == pytest.approx(params * 8 / GIB, rel=0.01)
    assert foreach.peak_phase == "optimizer_step"
    assert foreach.breakdown_gib["temporary"] == pytest.approx(params * 2 / GIB, rel=1e-3)
    assert foreach.allocated_gib - fused.allocated_gib == pytest.approx(params * 2 / GIB, rel=0.02)
    assert any("foreach" in note for note in foreach.assumptions)
    assert any("fused" in note for note in fused.assumptions)


def test_mixed_precision_full_finetune_drops_from_20_to_18_bytes_per_parameter():
    """fp32 weights 4 + grads 4 + Adam 8: the step is 16 B/param fused (the forward's 2 B/param autocast copies
    make the peak 18), 20 with the foreach temporary."""
    params = resolve("llama-2-7b").total_params
    fused = estimate(EstimateRequest(**STEP))
    foreach = estimate(EstimateRequest(**STEP, optimizer_impl="foreach"))
    assert fused.allocated_gib == pytest.approx(params * 18 / GIB, rel=0.01)
    assert foreach.allocated_gib == pytest.approx(params * 20 / GIB, rel=0.01)


def test_for_loop_adamw_holds_two_temporaries_of_the_largest_parameter():
    arch = resolve("llama-2-7b")
    loop = estimate(EstimateRequest(**STEP | {"precision": "bf16", "seq_len": 1}, optimizer_impl="for_loop"))
    largest = max(arch.vocab * arch.hidden, arch.hidden * arch.intermediate)
    assert loop.peak_phase == "optimizer_step"
    assert loop.breakdown_gib["temporary"] == pytest.approx(2 * largest * 2 / GIB, abs=0.002)


def test_cli_and_chat_fill_the_same_defaults():
    """request_for_spec (chat) and EstimateRequest (CLI, web) share one definition of the defaults."""
    request, _ = request_for_spec(JobSpec(language="en", model="llama-3.1-8b"))
    plain = EstimateRequest(model="llama-3.1-8b")
    for name in (
        "method",
        "seq_len",
        "micro_batch_size",
        "gradient_checkpointing",
        "optimizer",
        "optimizer_impl",
        "flash_attention",
        "lora_rank",
        "lora_targets",
        "loss",
    ):
        assert getattr(request, name) == getattr(plain, name) == getattr(DEFAULTS, name), name


def test_readme_qlora_on_an_l4_fits_with_the_default_recipe():
    result = estimate(EstimateRequest(model="llama-3.1-8b", method="qlora", gpu="L4"))
    assert result.fit is not None and result.fit.fits
    assert (
        result.per_gpu_gib
        == estimate_for_spec(JobSpec(language="en", model="llama-3.1-8b", method="qlora"), gpu="L4").per_gpu_gib
    )


def test_qlora_on_llama_3_8b_needs_less_than_lora_for_the_issue_job():
    common = {"model": "llama-3-8b", "micro_batch_size": 4, "seq_len": 4096}
    for checkpointing in (True, False):
        qlora = estimate(EstimateRequest(method="qlora", gradient_checkpointing=checkpointing, **common))
        lora = estimate(EstimateRequest(method="lora", gradient_checkpointing=checkpointing, **common))
        assert qlora.per_gpu_gib <= lora.per_gpu_gib
        if checkpointing:  # the usual recipe: the 4-bit base saves memory outright
            assert qlora.per_gpu_gib < lora.per_gpu_gib


def test_kbit_upcast_recipe_is_an_explicit_choice_and_costs_more():
    common = {"model": "mistral-7b", "method": "qlora", "micro_batch_size": 4, "seq_len": 4096}
    bf16 = estimate(EstimateRequest(**common, qlora_upcast=False))
    upcast = estimate(EstimateRequest(**common, qlora_upcast=True))
    assert upcast.per_gpu_gib > bf16.per_gpu_gib
    assert any("prepare_model_for_kbit_training" in note for note in upcast.assumptions)
    # Unstated, the safe upcast recipe (what the published HF QLoRA runs match) while it stays below LoRA.
    assert estimate(EstimateRequest(**common)).per_gpu_gib == upcast.per_gpu_gib


def test_unstated_recipe_is_kept_at_lora_where_the_upcast_would_exceed_it():
    """Past the point where the fp32 upcast would need more than LoRA, the estimate stays at LoRA's figure: never
    above LoRA, on the safe side of TRL's bf16 recipe, and (unlike switching to that recipe, which hypothesis caught
    making a longer sequence need less) monotone in sequence length and batch."""
    common = {"model": "llama-3-8b", "micro_batch_size": 4, "seq_len": 4096, "gradient_checkpointing": False}
    upcast = estimate(EstimateRequest(method="qlora", qlora_upcast=True, **common))
    lora = estimate(EstimateRequest(method="lora", **common))
    bf16 = estimate(EstimateRequest(method="qlora", qlora_upcast=False, **common))
    default = estimate(EstimateRequest(method="qlora", **common))
    assert upcast.per_gpu_gib > lora.per_gpu_gib  # the issue's case: 157.5 vs 157.0 GiB before the fix
    assert bf16.per_gpu_gib < default.per_gpu_gib == lora.per_gpu_gib
    assert sum(default.breakdown_gib.values()) == pytest.approx(default.per_gpu_gib, abs=0.01)
    assert any("kept at LoRA's figure" in note for note in default.assumptions)


MODELS = st.sampled_from([m.id for m in all_models()])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    model=MODELS,
    precision=st.sampled_from(["fp32", "amp_bf16", "amp_fp16", "bf16", "fp16"]),
    optimizer=st.sampled_from(["adamw", "adamw_8bit", "paged_adamw_8bit", "sgd", "adafactor"]),
    impl=st.sampled_from(["fused", "foreach", "for_loop"]),
    checkpointing=st.booleans(),
    flash=st.booleans(),
    seq=st.integers(1, 65536),
    batch=st.integers(1, 32),
    rank=st.sampled_from([1, 8, 16, 64, 256]),
    targets=st.sampled_from(["all-linear", "q_proj,v_proj", "attention", "mlp"]),
    layout=st.sampled_from(
        [(1, "none"), (2, "ddp"), (8, "zero2"), (8, "zero3"), (64, "zero3"), (4, "fsdp"), (256, "fsdp")]
    ),
)
def test_qlora_never_needs_more_than_lora_for_the_same_job(
    model, precision, optimizer, impl, checkpointing, flash, seq, batch, rank, targets, layout
):
    gpus, sharding = layout
    common = {
        "model": model,
        "precision": precision,
        "optimizer": optimizer,
        "optimizer_impl": impl,
        "gradient_checkpointing": checkpointing,
        "flash_attention": flash,
        "seq_len": seq,
        "micro_batch_size": batch,
        "lora_rank": rank,
        "lora_targets": targets,
        "num_gpus": gpus,
        "sharding": sharding,
    }
    try:
        lora = estimate(EstimateRequest(method="lora", **common))
    except ValueError:  # targets absent from this architecture (no gated MLP)
        return
    qlora = estimate(EstimateRequest(method="qlora", **common))
    assert qlora.per_gpu_gib <= lora.per_gpu_gib


def test_reserve_keeps_freed_activation_blocks_while_gradients_are_allocated():
    """transformers' BERT-large runs (V100, fp32, seq 512): without checkpointing nvidia-smi read 1.9 GiB more than
    with it, though the allocated peaks hardly differ; the reserve holds the smaller of layer activations and
    gradients (the safe side, where the published figures were 15-19 % above the old estimate)."""
    common = {
        "model": "bert-large",
        "precision": "fp32",
        "optimizer_impl": "for_loop",
        "flash_attention": False,
        "seq_len": 512,
        "micro_batch_size": 1,
    }
    plain = estimate(EstimateRequest(**common, gradient_checkpointing=False))
    checkpointed = estimate(EstimateRequest(**common, gradient_checkpointing=True))
    gradients = resolve("bert-large").total_params * 4 / GIB
    assert plain.reserved_gib - plain.allocated_gib >= gradients * 0.99
    assert checkpointed.reserved_gib - checkpointed.allocated_gib < gradients / 2
    assert plain.per_gpu_gib - checkpointed.per_gpu_gib >= 1.2


def test_several_gpus_default_to_fsdp_for_the_cli_and_the_chat():
    from tools.memory.estimator import request_with_defaults

    cli, filled = request_with_defaults({"model": "llama-3.1-8b", "num_gpus": 4, "sharding": None})
    chat, _ = request_for_spec(JobSpec(language="en", model="llama-3.1-8b", num_gpus=4))
    assert cli.sharding == chat.sharding == "fsdp"
    assert any("FSDP" in note for note in filled)
    explicit, filled = request_with_defaults({"model": "llama-3.1-8b", "num_gpus": 4, "sharding": "zero2"})
    assert explicit.sharding == "zero2" and not any("FSDP" in note for note in filled)
    assert request_with_defaults({"model": "llama-3.1-8b"})[0].sharding == "none"
