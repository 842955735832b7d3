"""The layout search's memory figure (tools.memory.layout_gib: the workload's setup with the layout's fields changed)
equals the estimator's per_gpu_gib on the request with those fields changed, and refuses the same layouts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tools.memory import EstimateRequest, layout_gib, per_gpu_gib
from tools.memory.setup import build_setup, resolve_arch


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
