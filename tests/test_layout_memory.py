"""The layout search's memory figure (tools.memory.layout_gib: the workload's setup with the layout's fields changed)
equals the estimator's per_gpu_gib on the request with those fields changed, and refuses the same layouts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tools.memory import EstimateRequest, layout_gib, layout_question, per_gpu_gib
from tools.memory.setup import build_setup, check_degrees, degrees_fit, resolve_arch


def _outcome(call: object) -> float | str:
    """The figure, or 'refused' when the estimator raises ValueError."""
    try:
        return call()  # type: ignore[operator, no-any-return]
    except ValueError:
        return "refused"


@settings(max_examples=80, deadline=None)
@given(
    model=st.sampled_from(["gpt2", "llama-3.1-8b", "qwen2.5-14b", "mixtral-8x7b", "llama-3-70b", "phi-4"]),
    method=st.sampled_from(["full_finetune", "lora", "qlora", "pretrain"]),
    seq_len=st.integers(64, 16384),
    qlora_upcast=st.sampled_from([None, True, False]),
    replicas=st.integers(1, 16),
    sharding=st.sampled_from(["none", "ddp", "zero1", "zero2", "zero3", "fsdp"]),
    tp=st.sampled_from([1, 2, 3, 4, 5, 8]),
    checkpointing=st.booleans(),
    micro=st.integers(1, 64),
)
def test_layout_gib_equals_the_request_path(
    model: str,
    method: str,
    seq_len: int,
    qlora_upcast: bool | None,
    replicas: int,
    sharding: str,
    tp: int,
    checkpointing: bool,
    micro: int,
) -> None:
    """Same value (or the same refusal) for any layout of any job (GPUs: a multiple of the degree, as searched)."""
    gpus = tp * replicas
    request = EstimateRequest(model=model, method=method, seq_len=seq_len, qlora_upcast=qlora_upcast)
    base = build_setup(request, resolve_arch(request))
    update = {
        "num_gpus": gpus,
        "sharding": sharding,
        "tensor_parallel": tp,
        "gradient_checkpointing": checkpointing,
        "micro_batch_size": micro,
    }
    expected = _outcome(lambda: per_gpu_gib(request.model_copy(update=update)))
    found = _outcome(
        lambda: layout_gib(base, gpus=gpus, sharding=sharding, tp=tp, checkpointing=checkpointing, batch=micro)
    )
    assert found == expected


@settings(max_examples=120, deadline=None)
@given(
    model=st.sampled_from(["gpt2", "llama-3.1-8b", "qwen2.5-14b", "mixtral-8x7b", "llama-3-70b"]),
    method=st.sampled_from(["full_finetune", "lora", "qlora", "pretrain"]),
    precision=st.sampled_from([None, "bf16", "amp_bf16", "fp32"]),
    offload=st.sampled_from(["none", "optimizer", "optimizer+params"]),
    sharding=st.sampled_from(["none", "ddp", "zero1", "zero2", "zero3", "fsdp"]),
    tp=st.sampled_from([1, 2, 4, 8]),
    replicas=st.integers(1, 64),
    spare=st.tuples(st.integers(0, 7), st.integers(0, 7)),
    other=st.integers(2, 600),
    pick=st.sampled_from([0, 0, 1, 2]),
    checkpointing=st.booleans(),
    micro=st.integers(1, 16),
)
def test_layouts_asking_the_same_memory_question_get_the_same_answer(
    model: str,
    method: str,
    precision: str | None,
    offload: str,
    sharding: str,
    tp: int,
    replicas: int,
    spare: tuple[int, int],
    other: int,
    pick: int,
    checkpointing: bool,
    micro: int,
) -> None:
    """Two GPU counts with the same layout_question (several or not, and the data-parallel degree where the sharding
    divides states by it) give the same layout_gib bit for bit, or both the same refusal: the memo keyed by it
    answers every layout of that question. The second count asks the same question by construction, or is one GPU
    or any count (where a key too coarse would call different questions the same)."""
    request = EstimateRequest(
        model=model,
        method=method,
        precision=precision,
        num_gpus=2,
        sharding="zero3" if offload != "none" else "none",
        offload=offload,
    )
    base = build_setup(request, resolve_arch(request))
    first = tp * replicas + spare[0] % tp
    second = [  # another count asking the same question, a single GPU, or any count
        tp * replicas + spare[1] % tp if sharding not in ("none", "ddp") else (other if first > 1 else 1),
        1,
        other,
    ][pick]
    layout = {"sharding": sharding, "tp": tp, "checkpointing": checkpointing, "batch": micro}
    same = layout_question(pp=base.pp, gpus=first, **layout) == layout_question(pp=base.pp, gpus=second, **layout)
    assert same or pick > 0  # the first kind always asks the same question
    if same:
        assert _outcome(lambda: layout_gib(base, gpus=first, **layout)) == _outcome(
            lambda: layout_gib(base, gpus=second, **layout)
        )


@settings(max_examples=200, deadline=None)
@given(
    model=st.sampled_from(["gpt2", "llama-3.1-8b", "qwen2.5-14b", "mixtral-8x7b", "llama-3-70b", "phi-4", "bert-base"]),
    params_b=st.sampled_from([None, 3.3]),
    tp=st.integers(1, 64),
    pp=st.integers(1, 200),
)
def test_degrees_fit_exactly_where_check_degrees_accepts(model: str, params_b: float | None, tp: int, pp: int) -> None:
    """The memory floor skips a degree by degrees_fit: it says no exactly where check_degrees raises (an unknown
    model sized by its parameters is approximate: any degree)."""
    request = EstimateRequest(model=None if params_b else model, params_b=params_b)
    arch = resolve_arch(request)
    assert degrees_fit(arch, tp, pp) == (_outcome(lambda: check_degrees(arch, tp, pp)) != "refused")
