"""The per-GPU peak: the larger of the forward/backward and optimizer-step phases, plus what nvidia-smi adds.

Setups are frozen and the terms pure, so a setup's per-GPU bytes and a QLoRA setup's recipe (with the bytes of the
open recipe, which the choice computes), asked for again, come from bounded LRUs; one evaluation computes its model
states and activations once."""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from tools.memory.request import GIB
from tools.memory.setup import Setup, changed
from tools.memory.sharding import setup_states
from tools.memory.terms import activations, logit_bytes

NCCL_GIB = 0.45
"""NCCL communicator buffers per GPU when more than one GPU takes part."""
ALLOCATOR_RESERVE_FRACTION = 0.05
"""Caching-allocator blocks reserved beyond the allocated peak (fragmentation, block rounding)."""
ALLOCATOR_RESERVE_MIN_GIB = 0.1
FIT_MARGIN = 0.05
"""Share of each GPU's memory kept free on top of the estimate (estimator error and fragmentation): a job fits when
its per-GPU estimate is at most (1 - FIT_MARGIN) of the memory. The one fit threshold of `estimate`, `recommend`,
the chat and /compare (tools.jobtime.topology.DEFAULT_MEMORY_MARGIN is the same figure)."""


def gib(value: float) -> float:
    """Bytes to GiB rounded for display."""
    return round(value / GIB, 3)


def resolved(setup: Setup) -> Setup:
    """The setup with the QLoRA recipe decided. Unstated, the fp32-upcast recipe (peft's
    prepare_model_for_kbit_training, which the published HF QLoRA measurements match) is assumed, the safe side;
    where that would need more than LoRA for the same job, the bf16 recipe (TRL's casting) that an expert would use
    instead. So QLoRA never needs more than LoRA."""
    if setup.method != "qlora" or setup.qlora_upcast is not None:
        return setup
    return _qlora_recipe(setup).setup


class QloraRecipe(NamedTuple):
    """A QLoRA setup whose recipe was open: the setup with the recipe decided, and the per-GPU bytes of the open
    one (the fp32 upcast's, kept at LoRA's figure where the upcast needs more)."""

    setup: Setup
    open_bytes: float


def qlora_recipe(setup: Setup) -> QloraRecipe:
    """The decided recipe of a QLoRA setup whose recipe is open, and its per-GPU bytes (memoised)."""
    return _qlora_recipe(setup)


@lru_cache(maxsize=4096)
def _qlora_recipe(setup: Setup) -> QloraRecipe:
    """qlora_recipe, computed (only open QLoRA setups are decided, so only these are memoised)."""
    upcast = changed(setup, {"qlora_upcast": True})
    upcast_bytes = per_gpu_bytes(upcast)
    lora_bytes = per_gpu_bytes(changed(setup, {"method": "lora"}))
    chosen = upcast if upcast_bytes <= lora_bytes else changed(setup, {"qlora_upcast": False})
    return QloraRecipe(chosen, min(upcast_bytes, lora_bytes))


TERMS = ("weights", "gradients", "optimizer", "activations", "temporary")
"""The peak terms' names, in the order _Peak lists their bytes."""


class _Peak(NamedTuple):
    """peak_terms' answer (the terms' bytes in TERMS order, and their sum), with the activation and gradient bytes
    the allocator reserve reads."""

    terms: tuple[float, ...]
    allocated: float
    phase: str
    host: float
    trainable: int
    activations: float
    gradients: float


def _peak(setup: Setup) -> _Peak:
    """The peak of a resolved setup (its model states and activations computed once)."""
    arch = setup.arch
    trainable, states = setup_states(setup)
    acts, one_layer = activations(setup)
    head_gradient = 0.0 if setup.adapters else states.gradients * arch.vocab * arch.hidden / max(arch.total_params, 1)
    logits_first = acts + head_gradient >= states.gradients + one_layer  # start of backward vs end of it
    forward_backward = (
        states.weights + states.autocast_copies,
        head_gradient if logits_first else states.gradients,
        states.optimizer,
        acts if logits_first else one_layer,
        states.gathered,
    )
    step = (states.weights, states.gradients, states.optimizer, 0.0, states.step_temporary)
    step_bytes, forward_backward_bytes = sum(step), sum(forward_backward)
    if step_bytes > forward_backward_bytes:
        return _Peak(step, step_bytes, "optimizer_step", states.host, trainable, acts, states.gradients)
    return _Peak(
        forward_backward, forward_backward_bytes, "forward_backward", states.host, trainable, acts, states.gradients
    )


def peak_terms(setup: Setup) -> tuple[dict[str, float], str, float, int]:
    """Peak memory terms (bytes) at the dominant phase, its name, host RAM bytes and trainable params."""
    peak = _peak(resolved(setup))
    return dict(zip(TERMS, peak.terms)), peak.phase, peak.host, peak.trainable


def allocator_reserve(allocated: float, setup: Setup) -> float:
    """max_memory_reserved minus max_memory_allocated (bytes): a share of the peak for block rounding and
    fragmentation; one segment the size of the largest transient tensor (the fp32 logits), which the caching
    allocator keeps once a later request cannot reuse it; and the blocks freed by the layer activations during
    backward, which stay cached while the gradients are allocated in blocks of other sizes (the smaller of the two;
    the few large logit blocks are split and reused instead). That term is the safe reading of the transformers
    BERT runs, where a step without checkpointing reserved 1.9 GiB more than one with it although the allocated
    peak hardly differs (evals/calibration/SOURCES.md)."""
    setup = resolved(setup)
    return _reserve(allocated, setup, activations(setup)[0], setup_states(setup)[1].gradients)


def _reserve(allocated: float, setup: Setup, acts: float, gradients: float) -> float:
    """allocator_reserve of a resolved setup from its activation bytes (logits included) and gradient bytes."""
    logits = logit_bytes(setup)
    largest_transient = logits / 3
    layer_activations = acts - logits
    kept = min(max(layer_activations, 0.0), gradients)
    return max(ALLOCATOR_RESERVE_MIN_GIB * GIB, ALLOCATOR_RESERVE_FRACTION * allocated + largest_transient + kept)


def overhead_bytes(allocated: float, setup: Setup) -> float:
    """nvidia-smi minus allocated: allocator reserve, CUDA context, NCCL buffers (bytes)."""
    return _overhead(allocator_reserve(allocated, setup), setup)


def _overhead(reserve: float, setup: Setup) -> float:
    """overhead_bytes from the allocator reserve."""
    nccl = NCCL_GIB * GIB if setup.gpus > 1 else 0.0
    return reserve + setup.context_bytes + nccl


def allocation(setup: Setup) -> tuple[float, float]:
    """(allocated bytes at the peak, the overhead nvidia-smi adds) of a resolved setup: the terms and the reserve
    from one computation of its model states and activations."""
    peak = _peak(setup)
    return peak.allocated, _overhead(_reserve(peak.allocated, setup, peak.activations, peak.gradients), setup)


@lru_cache(maxsize=4096)
def per_gpu_bytes(setup: Setup) -> float:
    """nvidia-smi-level per-GPU bytes of a setup (used by the searches). An unstated QLoRA recipe is the fp32
    upcast kept at LoRA's figure where the upcast would need more: never above LoRA, and (unlike switching to the
    bf16 recipe there) never less for a longer sequence or a bigger batch, and on the safe side of the bf16 recipe."""
    if setup.method == "qlora" and setup.qlora_upcast is None:
        return _qlora_recipe(setup).open_bytes
    allocated, overhead = allocation(setup)
    return allocated + overhead


def with_changes(setup: Setup, **changes: object) -> Setup:
    """A copy of `setup` with some fields changed."""
    return changed(setup, changes)
