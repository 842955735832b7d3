"""The layout search's memory question (tools.memory.estimator.per_gpu_gib) against the full estimate it stands in for."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tools.memory.estimator import EstimateRequest, estimate, per_gpu_gib

BASES = st.builds(
    EstimateRequest,
    model=st.sampled_from(["llama-3.1-8b", "qwen2.5-14b", "gpt2", "mixtral-8x7b", "gemma-2-9b"]),
    method=st.sampled_from(["full_finetune", "lora", "qlora", "pretrain"]),
    seq_len=st.integers(128, 16384),
    micro_batch_size=st.integers(1, 16),
    gradient_checkpointing=st.booleans(),
)
LAYOUTS = st.fixed_dictionaries(
    {
        "num_gpus": st.sampled_from([1, 2, 4, 8, 16]),
        "sharding": st.sampled_from(["none", "ddp", "zero2", "fsdp"]),
        "tensor_parallel": st.sampled_from([1, 2, 4]),
    }
)


def _outcome(function, request):
    """The function's value, or the kind and text of the error it raised (unvalidated layouts may be nonsense)."""
    try:
        return function(request)
    except (ValueError, ArithmeticError) as error:
        return f"{type(error).__name__}: {error}"


@settings(max_examples=150, deadline=None)
@given(BASES, LAYOUTS)
def test_per_gpu_gib_is_the_estimates_figure_or_the_same_error(base, layout):
    request = base.model_copy(update=layout)  # as the layout search asks (tools.jobtime.layouts.memory_gib)
    expected = _outcome(lambda r: estimate(r).per_gpu_gib, request)
    assert _outcome(per_gpu_gib, request) == expected
