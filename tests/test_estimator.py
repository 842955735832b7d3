"""VRAM estimator: framework byte rules, LoRA counts, fit search, fixes, errors and the calibration target."""

import pytest

from contract.jobspec import JobSpec
from tools.memory.estimator import (
    GIB,
    EstimateRequest,
    estimate,
    estimate_for_spec,
    lora_params,
)
from tools.models.registry import resolve


def _states_gib(result):
    """Weights + gradients + optimizer state at the optimizer step (model states only)."""
    return sum(result.breakdown_gib[k] for k in ("weights", "gradients", "optimizer"))


def _step_request(**changes):
    """A configuration whose peak is the optimizer step (tiny activations, torch's foreach AdamW)."""
    base = {
        "model": "llama-2-7b",
        "method": "full_finetune",
        "precision": "amp_bf16",
        "micro_batch_size": 1,
        "seq_len": 16,
        "gradient_checkpointing": True,
        "optimizer": "adamw",
        "optimizer_impl": "foreach",
    }
    return EstimateRequest(**(base | changes))


@pytest.mark.parametrize(
    ("sharding", "gpus", "bytes_per_param"),
    [
        ("zero1", 8, 4 + 16 / 8),  # DeepSpeed: 16-bit params + grads, fp32 master/grads/Adam partitioned
        ("zero2", 8, 2 + 18 / 8),  # DeepSpeed stage_1_and_2 estimator: 2 + 18/N
        ("zero2", 64, 2 + 18 / 64),
    ],
)
def test_deepspeed_zero1_and_2_model_states_follow_the_framework_rules(sharding, gpus, bytes_per_param):
    result = estimate(_step_request(num_gpus=gpus, sharding=sharding))
    params = resolve("llama-2-7b").total_params
    assert _states_gib(result) == pytest.approx(params * bytes_per_param / GIB, rel=1e-3)


def test_zero3_model_states_are_18_bytes_over_n_plus_the_gathered_largest_layer():
    result = estimate(_step_request(num_gpus=16, sharding="zero3", seq_len=1))
    arch = resolve("llama-2-7b")
    assert _states_gib(result) == pytest.approx(arch.total_params * 18 / 16 / GIB, rel=1e-3)
    largest = max(arch.layer_params, arch.embedding_params)
    assert result.breakdown_gib["temporary"] == pytest.approx(4 * largest / GIB, rel=1e-3)


def test_single_gpu_mixed_precision_adam_is_16_bytes_plus_autocast_and_step_temporary():
    result = estimate(_step_request())
    params = resolve("llama-2-7b").total_params
    # fp32 weights 4 + fp32 grads 4 + Adam 8, and the foreach step's temporary (4).
    assert result.allocated_gib == pytest.approx(params * 20 / GIB, rel=0.01)


def test_pure_bf16_training_needs_half_of_mixed_precision_states():
    mixed = estimate(_step_request())
    pure = estimate(_step_request(precision="bf16"))
    assert _states_gib(pure) == pytest.approx(_states_gib(mixed) / 2, rel=1e-3)


@pytest.mark.parametrize(
    ("model", "targets", "rank", "expected"),
    [
        ("llama-2-7b", "q_proj,v_proj", 8, 4_194_304),  # torchtune prints 4194304 trainable params
        ("llama-3-8b", "all-linear", 16, 41_943_040),
        ("mistral-7b", "q_proj,k_proj,v_proj,o_proj", 16, 13_631_488),
    ],
)
def test_lora_adapter_counts_are_exact(model, targets, rank, expected):
    result = estimate(EstimateRequest(model=model, method="lora", lora_targets=targets, lora_rank=rank))
    assert result.trainable_params == expected


def test_lora_target_aliases_expand():
    arch = resolve("llama-2-7b")
    assert (
        lora_params(arch, ("q_proj", "v_proj"), 8)
        == estimate(
            EstimateRequest(model="llama-2-7b", method="lora", lora_targets="q,v", lora_rank=8)
        ).trainable_params
    )


def test_qlora_base_is_about_half_a_byte_per_quantised_parameter():
    result = estimate(EstimateRequest(model="llama-3.1-8b", method="qlora", seq_len=16, gradient_checkpointing=True))
    arch = resolve("llama-3.1-8b")
    linear = arch.linear_params_per_layer * arch.layers
    expected = linear * 0.5159 + (arch.total_params - linear) * 4 + result.trainable_params * 4
    assert result.breakdown_gib["weights"] == pytest.approx(expected / GIB, rel=0.01)


def test_breakdown_adds_up_to_per_gpu_and_metrics_are_ordered():
    result = estimate(EstimateRequest(model="qwen2.5-7b", method="lora", micro_batch_size=4, seq_len=4096))
    assert sum(result.breakdown_gib.values()) == pytest.approx(result.per_gpu_gib, abs=0.01)
    assert result.allocated_gib < result.reserved_gib < result.per_gpu_gib


def test_fit_limits_are_tight():
    request = EstimateRequest(model="llama-3.1-8b", method="lora", gradient_checkpointing=True, gpu="A100-80GB")
    fit = estimate(request).fit
    assert fit.fits and fit.vram_gib == 80
    usable = 80 * 0.95  # the one fit threshold (issue 24): 5 % of the memory kept free, as recommend does
    at_max = estimate(request.model_copy(update={"micro_batch_size": fit.max_micro_batch_size}))
    over = estimate(request.model_copy(update={"micro_batch_size": fit.max_micro_batch_size + 1}))
    assert at_max.per_gpu_gib <= usable < over.per_gpu_gib
    longest = estimate(request.model_copy(update={"seq_len": fit.max_seq_len}))
    longer = estimate(request.model_copy(update={"seq_len": fit.max_seq_len + 1}))
    assert longest.per_gpu_gib <= usable < longer.per_gpu_gib


def test_fixes_when_it_does_not_fit_are_ranked_and_true():
    request = EstimateRequest(
        model="llama-3.1-8b", method="full_finetune", micro_batch_size=4, seq_len=4096, vram_gib=80
    )
    result = estimate(request)
    fit = result.fit
    assert not fit.fits and fit.fixes
    fitting = [f for f in fit.fixes if f.fits]
    assert fitting and fit.fixes[: len(fitting)] == fitting  # fixes that fit come first
    for fix in fit.fixes:
        assert fix.per_gpu_gib < result.per_gpu_gib
        if fix.code in ("combined", "more_gpus"):
            continue
        applied = estimate(request.model_copy(update=fix.changes))
        assert applied.per_gpu_gib == pytest.approx(fix.per_gpu_gib, abs=0.01)
        assert (applied.per_gpu_gib <= 80) == fix.fits


def test_more_gpus_fix_names_a_count_that_fits():
    request = EstimateRequest(model="llama-3.1-70b", method="full_finetune", gradient_checkpointing=True, gpu="H100")
    more = [f for f in estimate(request).fit.fixes if f.code == "more_gpus"]
    assert more and more[0].fits
    applied = estimate(request.model_copy(update=more[0].changes))
    assert applied.per_gpu_gib <= applied.fit.vram_gib


def test_offload_moves_state_to_host_ram():
    on_gpu = estimate(EstimateRequest(model="llama-2-7b", sharding="zero2", num_gpus=1, gradient_checkpointing=True))
    offloaded = estimate(
        EstimateRequest(
            model="llama-2-7b", sharding="zero2", num_gpus=1, offload="optimizer", gradient_checkpointing=True
        )
    )
    assert offloaded.per_gpu_gib < on_gpu.per_gpu_gib
    assert offloaded.host_ram_gib and offloaded.host_ram_gib > 50
    assert on_gpu.host_ram_gib is None


def test_unknown_model_by_size_is_flagged_approximate():
    result = estimate(EstimateRequest(params_b=7, method="lora"))
    assert result.approximate and any("approximate" in note for note in result.assumptions)
    assert result.total_params == pytest.approx(7e9, rel=1e-6)


def test_estimate_for_spec_uses_spec_fields_and_defaults():
    spec = JobSpec(language="it", model="llama-3.1-8b", method="qlora", seq_len=4096, num_gpus=1)
    result = estimate_for_spec(spec, gpu="L4")
    assert result.method == "qlora" and result.fit.gpu == "L4"
    assert any("gradient checkpointing" in note for note in result.assumptions)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"model": "not-a-model"}, "unknown model"),
        ({"tensor_parallel": 3, "num_gpus": 3}, "does not divide 32 attention heads"),
        ({"num_gpus": 6, "tensor_parallel": 4}, "cannot be split"),
        ({"offload": "optimizer"}, "offload needs a ZeRO stage"),
        ({"pipeline_parallel": 64, "num_gpus": 64}, "exceeds the 32 layer"),
        ({"method": "lora", "lora_targets": "qkv_magic"}, "unknown LoRA target"),
        ({"gpu": "GTX 9999"}, "unknown GPU"),
    ],
)
def test_bad_input_names_the_problem(changes, message):
    with pytest.raises(ValueError, match=message):
        estimate(EstimateRequest(**({"model": "llama-2-7b"} | changes)))


@pytest.mark.parametrize(
    "changes",
    [
        {"micro_batch_size": -1},
        {"num_gpus": 0},
        {"seq_len": 10_000_001},
        {"params_b": -7, "model": None},
        {"model": None},
    ],
)
def test_invalid_values_are_rejected_by_validation(changes):
    with pytest.raises(ValueError):
        EstimateRequest(**({"model": "llama-2-7b"} | changes))


def test_calibration_median_error_meets_the_target_on_the_tuned_split():
    from evals.calibrate import CALIBRATION_DIR, load_rows, score_row, summarise

    scored = [score_row(r) for r in load_rows(sorted(CALIBRATION_DIR.glob("*.csv")))]
    summary = summarise(scored)
    tuned, holdout = summary["split:tuned"], summary["split:holdout"]
    assert tuned["rows"] >= 25 and holdout["rows"] >= 10
    assert tuned["median_ape"] <= 10
    assert summary["all"]["median_ape"] < summary["all"]["naive_median_ape"] / 2
    # the worst under-estimate (an out-of-memory error for the user), worked out from the rows themselves: on the
    # tuned split no row is under-estimated by more than 10 %, and the summary names that row
    tuned_rows = [s for s in scored if s.split == "tuned"]
    worst = min(tuned_rows, key=lambda s: (s.estimated_gib - s.measured_gib) / s.measured_gib)
    assert (worst.estimated_gib - worst.measured_gib) / worst.measured_gib >= -0.10, worst.id
    assert tuned["worst_under_id"] == worst.id


def test_holdout_sources_are_disjoint_from_tuned_sources():
    """Whole sources are held out: no repository contributes rows to both splits."""
    from evals.calibrate import CALIBRATION_DIR, load_rows

    sources: dict[str, set[str]] = {}
    for row in load_rows(sorted(CALIBRATION_DIR.glob("*.csv"))):
        sources.setdefault(row["split"], set()).add(row["source"].split(":")[0])
    assert set(sources) == {"tuned", "holdout"}
    assert not sources["tuned"] & sources["holdout"]


def test_unknown_model_name_with_a_size_is_approximated_and_flagged():
    result = estimate(EstimateRequest(model="Qwen4-9B", method="lora"))
    assert result.unknown_model == "Qwen4-9B" and result.approximate
    assert result.total_params == pytest.approx(9e9, rel=1e-6)
    assert any("unknown model 'Qwen4-9B'" in note and "config.json" in note for note in result.assumptions)
    stated = estimate(EstimateRequest(model="my-private-model", params_b=13))
    assert stated.unknown_model == "my-private-model" and stated.total_params == pytest.approx(13e9, rel=1e-6)
    known = estimate(EstimateRequest(model="qwen2.5-7b"))
    assert known.unknown_model is None and not known.approximate
    by_size = estimate(EstimateRequest(params_b=7))
    assert by_size.unknown_model is None and by_size.approximate


def test_unknown_model_without_any_size_is_an_error_naming_close_matches():
    with pytest.raises(ValueError, match="unknown model 'llama-9'"):
        estimate(EstimateRequest(model="llama-9"))


def test_chat_request_for_an_unknown_model_keeps_its_name_and_size():
    spec = JobSpec(language="en", model="Qwen4-9B", params_b=9, method="qlora")
    result = estimate_for_spec(spec, gpu="L4")
    assert result.unknown_model == "Qwen4-9B" and result.total_params == pytest.approx(9e9, rel=1e-6)


@pytest.mark.parametrize("model", ["qwen3-30b-a3b", "mixtral-8x22b", "deepseek-v2-lite", "gpt-oss-20b"])
def test_mixture_of_experts_memory_is_sized_by_total_and_compute_by_active(model):
    """Every expert's weights, gradients and Adam states are resident; only the routed experts compute."""
    from tools.jobtime.throughput import matmul_params

    arch = resolve(model)
    result = estimate(EstimateRequest(model=model, precision="bf16", seq_len=16, optimizer_impl="foreach"))
    assert result.total_params == arch.total_params and result.active_params == arch.active_params
    assert result.breakdown_gib["weights"] == pytest.approx(arch.total_params * 2 / GIB, rel=1e-3)
    assert result.breakdown_gib["optimizer"] == pytest.approx(arch.total_params * 4 / GIB, rel=1e-3)
    assert matmul_params(arch) < arch.active_params < arch.total_params / 3
