"""The memory model's speed-ups (issue 27) keep its meaning: a cheap setup copy is the setup `Setup(...)` builds,
the model-state and activation memos are keyed by every field those terms read, and every new memo is bounded."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tools.memory.peak import _qlora_recipe, per_gpu_bytes, with_changes
from tools.memory.request import EstimateRequest
from tools.memory.setup import Setup, SetupKey, build_setup, lora_params, resolve_arch
from tools.memory.sharding import STATE_FIELDS, _state_fields, _states, shard_params
from tools.memory.terms import ACTIVATION_FIELDS, _activation_fields, _activations, _layer_bytes
from tools.models import all_models

DERIVED = {
    "profile": {"precision", "method", "qlora_upcast", "sharding"},
    "dp": {"gpus", "tp", "pp"},
    "adapters": {"method"},
    "deepspeed": {"sharding"},
}
"""The fields each Setup property reads."""

CHANGES = st.fixed_dictionaries(
    {},
    optional={
        "method": st.sampled_from(["full_finetune", "pretrain", "lora", "qlora"]),
        "precision": st.sampled_from(["fp32", "amp_bf16", "amp_fp16", "bf16", "fp16"]),
        "optimizer": st.sampled_from(["adamw", "adamw_8bit", "sgd", "adafactor"]),
        "batch": st.integers(1, 64),
        "seq": st.integers(1, 100_000),
        "checkpointing": st.booleans(),
        "flash": st.booleans(),
        "rank": st.integers(1, 256),
        "gpus": st.sampled_from([1, 2, 4, 8, 16]),
        "sharding": st.sampled_from(["none", "ddp", "zero1", "zero2", "zero3", "fsdp"]),
        "tp": st.sampled_from([1, 2, 4]),
        "offload": st.sampled_from(["none", "optimizer", "optimizer+params"]),
        "loss": st.sampled_from(["fp32", "half", "fused"]),
        "context_bytes": st.floats(0, 2**34),
        "optimizer_impl": st.sampled_from(["fused", "foreach", "for_loop"]),
        "qlora_upcast": st.sampled_from([None, True, False]),
    },
)


def _base(model: str, method: str) -> Setup:
    """A stated setup of `model` trained with `method`."""
    request = EstimateRequest(model=model, method=method)
    return build_setup(request, resolve_arch(request))


class _Recorder:
    """A setup that notes which of its attributes are read."""

    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        self.read: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        self.read.add(name)
        return getattr(self.setup, name)


@settings(max_examples=150, deadline=None)
@given(
    model=st.sampled_from([arch.id for arch in all_models()]),
    method=st.sampled_from(["lora", "qlora"]),
    changes=CHANGES,
)
def test_a_cheap_copy_is_the_setup_its_values_build(model: str, method: str, changes: dict[str, Any]) -> None:
    base = _base(model, method)
    copy = with_changes(base, **changes)
    built = Setup(**{**{f.name: getattr(base, f.name) for f in dataclasses.fields(Setup)}, **changes})
    assert type(copy) is Setup
    assert copy == built and hash(copy) == hash(built) and copy.profile == built.profile
    assert [getattr(copy, f.name) for f in dataclasses.fields(Setup)] == [
        getattr(built, f.name) for f in dataclasses.fields(Setup)
    ]
    assert base == _base(model, method)  # the original is untouched
    try:
        copy.seq = 1  # type: ignore[misc]
    except dataclasses.FrozenInstanceError:
        pass
    else:
        raise AssertionError("a copy must stay frozen")


@settings(max_examples=200, deadline=None)
@given(
    model=st.sampled_from([arch.id for arch in all_models()]),
    method=st.sampled_from(["full_finetune", "lora", "qlora"]),
    changes=CHANGES,
)
def test_model_states_and_activations_read_only_the_fields_their_memos_are_keyed_by(
    model: str, method: str, changes: dict[str, Any]
) -> None:
    setup = with_changes(_base(model, method), **changes)
    assume(setup.gpus % (setup.tp * setup.pp) == 0 and setup.adapters == bool(setup.lora_modules))
    for memo, fields, values in (
        (_states, STATE_FIELDS, _state_fields),
        (_activations, ACTIVATION_FIELDS, _activation_fields),
    ):
        recorder = _Recorder(setup)
        memo.__wrapped__(SetupKey(recorder, values(setup)))  # type: ignore[arg-type]
        read = set().union(*({name} if name in fields else DERIVED.get(name, {name}) for name in recorder.read))
        assert read <= set(fields), (memo, read - set(fields))


def test_the_new_memos_are_bounded() -> None:
    for memo in (per_gpu_bytes, _qlora_recipe, lora_params, shard_params, _states, _activations, _layer_bytes):
        assert memo.cache_info().maxsize is not None  # type: ignore[attr-defined]
