"""Model-state bytes per GPU under each parallel layout: DeepSpeed ZeRO-1/2/3 byte rules, FSDP FULL_SHARD units,
Megatron-style tensor/pipeline shards, DDP buckets and CPU offload."""

from __future__ import annotations

from functools import lru_cache
from operator import attrgetter
from typing import NamedTuple

from tools.memory.setup import Setup, SetupKey, lora_params, stage_layers
from tools.memory.terms import NF4_BYTES_PER_PARAM, optimizer_bytes
from tools.models import ModelArch


@lru_cache(maxsize=1024)
def shard_params(arch: ModelArch, tp: int, pp: int) -> float:
    """Parameters held by the most loaded tensor/pipeline shard (first stage: embeddings + its layers)."""
    layers_per_stage = stage_layers(arch, pp)
    first = (
        arch.embedding_params
        + layers_per_stage * arch.layer_params
        + (arch.head_params + arch.final_params if pp == 1 else 0)
    )
    last = (
        layers_per_stage * arch.layer_params
        + arch.head_params
        + arch.final_params
        + (arch.vocab * arch.hidden if pp > 1 and arch.tied_embeddings else 0)
    )
    return max(first, last) / tp


class States(NamedTuple):
    """Model-state bytes per GPU."""

    weights: float
    autocast_copies: float
    gradients: float
    optimizer: float
    gathered: float
    step_temporary: float
    host: float


STATE_FIELDS = (
    "arch",
    "method",
    "precision",
    "optimizer",
    "optimizer_impl",
    "lora_modules",
    "rank",
    "gpus",
    "sharding",
    "tp",
    "pp",
    "offload",
    "qlora_upcast",
)
"""The setup fields trainable parameters and model states depend on: not the sequence length, micro-batch,
checkpointing, attention kernel, loss or CUDA context, which a layout or fit search varies."""
_state_fields = attrgetter(*STATE_FIELDS)


def setup_states(setup: Setup) -> tuple[int, States]:
    """Trainable parameters and model states of a setup, memoised by the fields they depend on (STATE_FIELDS)."""
    return _states(SetupKey(setup, _state_fields(setup)))


@lru_cache(maxsize=1024)
def _states(key: SetupKey) -> tuple[int, States]:
    """setup_states, computed."""
    setup = key.setup
    arch = setup.arch
    trainable = lora_params(arch, setup.lora_modules, setup.rank) if setup.adapters else arch.total_params
    return trainable, model_states(setup, trainable)


def model_states(setup: Setup, trainable: int) -> States:
    """Weights, gradients and optimizer state per GPU under the requested precision and sharding."""
    arch, method, sharding, precision = setup.arch, setup.method, setup.sharding, setup.precision
    adapters, profile = method in ("lora", "qlora"), setup.profile
    shard = shard_params(arch, setup.tp, setup.pp)
    mp = setup.tp * setup.pp
    trainable_shard = trainable / mp if adapters else shard
    dp = setup.dp if sharding not in ("none", "ddp") else 1
    amp = precision in ("amp_bf16", "amp_fp16")
    weight_bytes = 2 if profile == "half" else 4
    # Frozen or trained base weights.
    if method == "qlora":
        linear = arch.linear_params_per_layer * arch.layers / mp
        base = linear * NF4_BYTES_PER_PARAM + (shard - linear) * weight_bytes
    else:
        base = shard * weight_bytes
    adapter_weights = trainable_shard * 4 if adapters else 0.0
    grad_bytes = 4 if (adapters or amp or precision == "fp32") else 2
    gradients = trainable_shard * grad_bytes
    optimizer = optimizer_bytes(setup, trainable_shard)
    autocast = shard * 2 if profile == "mixed" and method != "qlora" else 0.0
    gathered = 0.0
    host = 0.0
    step_temporary = step_temporary_bytes(setup, trainable_shard, optimizer)
    weights = base + adapter_weights
    if sharding in ("zero1", "zero2", "zero3") and not adapters and amp:
        # DeepSpeed mixed precision: 16-bit params and grads, fp32 master + fp32 grad partition + Adam states.
        weights, autocast = shard * 2, 0.0
        master = shard * 4
        fp32_grads = shard * 4
        if sharding == "zero1":
            gradients = shard * 2 + fp32_grads / dp
            optimizer = (master + optimizer) / dp
        elif sharding == "zero2":
            gradients = (shard * 2 + fp32_grads) / dp
            optimizer = (master + optimizer) / dp
        else:
            # DeepSpeed's ZeRO-3 rule: 18 bytes/param over N (16-bit param and fp32 grad partitions, fp32 master and
            # Adam states) plus the gathered largest layer.
            weights, gradients, optimizer = shard * 2 / dp, fp32_grads / dp, (master + optimizer) / dp
            gathered = 4 * largest_unit(arch, mp)
    elif sharding in ("zero1", "zero2"):
        optimizer /= dp
        if sharding == "zero2":
            gradients /= dp
    elif sharding in ("zero3", "fsdp"):
        weights, gradients, optimizer, step_temporary = (
            weights / dp,
            gradients / dp,
            optimizer / dp,
            step_temporary / dp,
        )
        if sharding == "zero3":
            gathered = 4 * largest_unit(arch, mp) if method != "qlora" else _qlora_zero3_gathered(arch, mp)
        else:
            gathered = _fsdp_gathered(arch, mp, method == "qlora", 4 if precision == "fp32" else 2)
        autocast = autocast / dp if sharding == "zero3" else 0.0
    if setup.offload != "none":
        host += (optimizer + gradients) * 1.5
        optimizer, step_temporary = 0.0, 0.0
        gradients = gradients * (2 / grad_bytes) / max(dp, 1) if sharding != "fsdp" else 0.0
        if setup.offload == "optimizer+params":
            host += weights * 1.5
            weights = 0.0
    elif sharding == "ddp" and setup.gpus > 1:
        gathered = gradients  # DDP bucket copies of the gradients (gradient_as_bucket_view=False)
    if method == "qlora" and sharding != "zero3":
        gathered += dequantised_bytes(arch, setup.tp)
    return States(weights, autocast, gradients, optimizer, gathered, step_temporary, host)


def largest_unit(arch: ModelArch, mp: int) -> float:
    """Parameters of the largest unit ZeRO-3 gathers (a block, the embeddings or the head) on one model shard."""
    return max(arch.max_layer_params, arch.embedding_params, arch.head_params) / mp


def _fsdp_gathered(arch: ModelArch, mp: int, qlora: bool, unit_bytes: int) -> float:
    """FSDP FULL_SHARD's gathered bytes: the root unit (embeddings, head, final norm) and three decoder-layer
    units, their linears in NF4 under a 4-bit base."""
    root = (arch.embedding_params + arch.head_params + arch.final_params) / mp
    if qlora:
        return root * 2 + 3 * arch.max_layer_linear_params / mp * NF4_BYTES_PER_PARAM
    return unit_bytes * (root + 3 * arch.max_layer_params / mp)


def dequantised_bytes(arch: ModelArch, tp: int) -> float:
    """The 16-bit copy of the largest 4-bit linear that bitsandbytes dequantises for one matmul."""
    return 2 * arch.largest_linear_params / tp


def _qlora_zero3_gathered(arch: ModelArch, mp: int) -> float:
    """ZeRO-3 with a 4-bit base: two gathered units (the one computing and the one prefetched), each stored as a
    layer's NF4 linears and 16-bit rest, plus the dequantised linear; or two 16-bit embedding/head units."""
    linear = arch.max_layer_linear_params
    layer = linear * NF4_BYTES_PER_PARAM + (arch.max_layer_params - linear) * 2
    return max(2 * layer / mp + dequantised_bytes(arch, mp), 4 * max(arch.embedding_params, arch.head_params) / mp)


def step_temporary_bytes(setup: Setup, trainable_shard: float, optimizer: float) -> float:
    """What the AdamW step allocates on top of the states: nothing for the fused kernel (HF Trainer default) or
    DeepSpeed's FusedAdam; one state-sized temporary for torch's foreach implementation (the sqrt of the second
    moments for all parameters at once); two temporaries of the largest parameter for the for-loop one."""
    if setup.optimizer != "adamw" or setup.sharding in ("zero1", "zero2", "zero3") or setup.offload != "none":
        return 0.0
    if setup.optimizer_impl == "foreach":
        return optimizer / 2
    if setup.optimizer_impl == "for_loop":
        state_bytes = optimizer / 2 / max(trainable_shard, 1.0)
        return 2 * largest_parameter(setup) * state_bytes
    return 0.0


def largest_parameter(setup: Setup) -> float:
    """Elements of the largest trainable tensor on one GPU (an embedding matrix, a linear, or a LoRA factor)."""
    arch = setup.arch
    if setup.adapters:
        shapes = arch.linear_shapes
        return setup.rank * max(max(shapes[name]) for name in setup.lora_modules) / setup.tp
    return max(arch.vocab * arch.hidden, arch.largest_linear_params) / setup.tp
