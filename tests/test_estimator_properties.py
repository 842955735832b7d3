"""Property tests: the estimator's memory is monotone where physics says so, and it never crashes."""

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tools.memory.estimator import EstimateRequest, estimate
from tools.models.registry import all_models

METHODS = st.sampled_from(["pretrain", "full_finetune", "lora", "qlora"])
PRECISIONS = st.sampled_from(["fp32", "amp_bf16", "amp_fp16", "bf16", "fp16"])
OPTIMIZERS = st.sampled_from(["adamw", "adamw_8bit", "paged_adamw_8bit", "sgd", "adafactor"])
MODELS = st.sampled_from([m.id for m in all_models()])
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _per_gpu(**fields) -> float:
    """nvidia-smi-level estimate for a request."""
    return estimate(EstimateRequest(**fields)).per_gpu_gib


@SETTINGS
@given(
    small=st.floats(0.01, 500),
    factor=st.floats(1.0, 4.0),
    method=METHODS,
    checkpointing=st.booleans(),
    seq=st.integers(1, 32768),
    batch=st.integers(1, 16),
)
@example(small=1.0, factor=1.125, method="qlora", checkpointing=False, seq=1, batch=1)  # fractional layers rounded up
def test_more_parameters_never_need_less_memory(small, factor, method, checkpointing, seq, batch):
    common = dict(method=method, gradient_checkpointing=checkpointing, seq_len=seq, micro_batch_size=batch)
    assert _per_gpu(params_b=small, **common) <= _per_gpu(params_b=small * factor, **common) + 1e-9


@SETTINGS
@given(
    model=MODELS,
    method=METHODS,
    precision=PRECISIONS,
    checkpointing=st.booleans(),
    flash=st.booleans(),
    seq=st.integers(1, 65536),
    longer=st.integers(0, 65536),
    batch=st.integers(1, 32),
    more=st.integers(0, 32),
)
@example(
    model="llama-2-70b",
    method="qlora",
    precision="bf16",
    checkpointing=True,
    flash=True,
    seq=3646,
    longer=2563,
    batch=17,
    more=0,
)  # found by hypothesis: the QLoRA recipe switch made the longer job smaller
def test_longer_sequences_and_bigger_batches_never_need_less(
    model, method, precision, checkpointing, flash, seq, longer, batch, more
):
    common = dict(
        model=model, method=method, precision=precision, gradient_checkpointing=checkpointing, flash_attention=flash
    )
    base = _per_gpu(seq_len=seq, micro_batch_size=batch, **common)
    assert base <= _per_gpu(seq_len=seq + longer, micro_batch_size=batch, **common) + 1e-9
    assert base <= _per_gpu(seq_len=seq, micro_batch_size=batch + more, **common) + 1e-9


@SETTINGS
@given(
    model=MODELS,
    method=METHODS,
    sharding=st.sampled_from(["zero3", "fsdp"]),
    gpus=st.integers(1, 256),
    extra=st.integers(1, 256),
    checkpointing=st.booleans(),
)
def test_more_zero3_gpus_never_need_more_per_gpu(model, method, sharding, gpus, extra, checkpointing):
    common = dict(model=model, method=method, sharding=sharding, gradient_checkpointing=checkpointing)
    fewer = estimate(EstimateRequest(num_gpus=gpus, **common))
    more = estimate(EstimateRequest(num_gpus=gpus + extra, **common))
    # NCCL buffers appear when going from one GPU to several; beyond that, sharding only removes memory.
    nccl = 0.45 if gpus == 1 else 0.0
    assert more.per_gpu_gib <= fewer.per_gpu_gib + nccl + 1e-9


@SETTINGS
@given(
    model=MODELS,
    method=METHODS,
    precision=PRECISIONS,
    optimizer=OPTIMIZERS,
    seq=st.integers(1, 32768),
    batch=st.integers(1, 16),
    gpus=st.sampled_from([1, 2, 8]),
    sharding=st.sampled_from(["none", "zero2", "fsdp"]),
)
def test_gradient_checkpointing_never_increases_the_peak(
    model, method, precision, optimizer, seq, batch, gpus, sharding
):
    common = dict(
        model=model,
        method=method,
        precision=precision,
        optimizer=optimizer,
        seq_len=seq,
        micro_batch_size=batch,
        num_gpus=gpus,
        sharding=sharding,
    )
    assert _per_gpu(gradient_checkpointing=True, **common) <= _per_gpu(gradient_checkpointing=False, **common) + 1e-9


@SETTINGS
@given(model=MODELS, checkpointing=st.booleans(), seq=st.integers(1, 16384), batch=st.integers(1, 8))
def test_qlora_needs_less_than_lora_which_needs_less_than_full(model, checkpointing, seq, batch):
    common = dict(
        model=model, gradient_checkpointing=checkpointing, seq_len=seq, micro_batch_size=batch, precision="bf16"
    )
    qlora = estimate(EstimateRequest(method="qlora", **common))
    lora = estimate(EstimateRequest(method="lora", **common))
    full = estimate(EstimateRequest(method="full_finetune", **common))
    assert qlora.breakdown_gib["weights"] < lora.breakdown_gib["weights"]
    assert lora.per_gpu_gib < full.per_gpu_gib
    if seq * batch <= 2048:  # the 4-bit base wins whenever activations do not dominate
        assert qlora.per_gpu_gib < lora.per_gpu_gib


@settings(max_examples=150, deadline=None)
@given(
    fields=st.fixed_dictionaries(
        {},
        optional={
            "model": st.one_of(MODELS, st.text(max_size=20)),
            "params_b": st.floats(allow_nan=True, allow_infinity=True),
            "method": st.text(max_size=12) | METHODS,
            "precision": PRECISIONS,
            "optimizer": OPTIMIZERS,
            "micro_batch_size": st.integers(-5, 10**7),
            "seq_len": st.integers(-5, 2 * 10**7),
            "gradient_checkpointing": st.booleans(),
            "flash_attention": st.booleans(),
            "lora_rank": st.integers(-1, 10**5),
            "lora_targets": st.text(max_size=30),
            "num_gpus": st.integers(-1, 10**6),
            "sharding": st.sampled_from(["none", "ddp", "zero1", "zero2", "zero3", "fsdp", "bogus"]),
            "tensor_parallel": st.integers(0, 64),
            "pipeline_parallel": st.integers(0, 64),
            "offload": st.sampled_from(["none", "optimizer", "optimizer+params", "x"]),
            "vram_gib": st.floats(-1, 1e6),
        },
    )
)
def test_no_crash_on_any_input(fields):
    """Any input gives an estimate or a ValueError (pydantic's ValidationError is one), nothing else."""
    try:
        result = estimate(EstimateRequest(**fields))
    except ValueError:
        return
    assert result.per_gpu_gib > 0
    assert result.allocated_gib <= result.reserved_gib <= result.per_gpu_gib
