"""A request resolved against its model: the plain numbers (model shape, precision, layout, LoRA targets) that the
memory terms are computed from."""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any

from tools.frozen import HashSlot
from tools.memory.request import GIB, EstimateRequest
from tools.models import (
    ModelArch,
    generic_decoder,
    load_hf_config,
    lookup,
    resolve,
    size_from_name,
)

LORA_TARGET_GROUPS = {
    "all-linear": ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"),
    "attention": ("q_proj", "k_proj", "v_proj", "o_proj"),
    "mlp": ("gate_proj", "up_proj", "down_proj"),
}
LORA_TARGET_ALIASES = {
    "q": "q_proj",
    "k": "k_proj",
    "v": "v_proj",
    "o": "o_proj",
    "gate": "gate_proj",
    "up": "up_proj",
    "down": "down_proj",
    "c_attn": "q_proj,k_proj,v_proj",
    "c_proj": "o_proj",
    "c_fc": "up_proj",
    "fc1": "up_proj",
    "fc2": "down_proj",
    "query": "q_proj",
    "key": "k_proj",
    "value": "v_proj",
    "dense": "o_proj",
    "w1": "gate_proj",
    "w3": "up_proj",
    "w2": "down_proj",
    "all": "all-linear",
    "all_linear": "all-linear",
}


def dtype_profile(precision: str, method: str, qlora_upcast: bool | None, sharding: str) -> str:
    """Dtype profile of weights and the residual stream: 'fp32', 'mixed' (fp32 weights/residual, 16-bit matmuls:
    torch autocast, or QLoRA after peft's prepare_model_for_kbit_training, which keeps the non-quantised modules in
    fp32) or 'half'. QLoRA otherwise follows the precision exactly as LoRA does; a DeepSpeed ZeRO stage casts the
    module itself to 16-bit."""
    if precision == "fp32":
        return "fp32"
    if method == "qlora" and qlora_upcast:
        return "mixed"
    if precision in ("amp_bf16", "amp_fp16") and sharding not in ("zero1", "zero2", "zero3"):
        return "mixed"
    return "half"


class _SetupSlots(HashSlot):
    """The slots a setup fills at creation besides its fields: its hash (HashSlot) and its dtype profile."""

    __slots__ = ("_profile",)
    _profile: str
    _hash_once: int  # HashSlot's slot


@dataclass(frozen=True, kw_only=True, slots=True)
class Setup(_SetupSlots):
    """The request resolved into plain numbers the memory terms are computed from (slotted: a new job makes a few
    hundred, which the memory model's caches keep; `changed` copies one cheaply)."""

    arch: ModelArch
    method: str
    precision: str
    optimizer: str
    batch: int
    seq: int
    checkpointing: bool
    flash: bool
    lora_modules: tuple[str, ...]
    rank: int
    gpus: int
    sharding: str
    tp: int
    pp: int
    offload: str
    loss: str
    context_bytes: float
    optimizer_impl: str = "fused"
    qlora_upcast: bool | None = None

    def __post_init__(self) -> None:
        """Hash and profile once, at creation: every setup keys the memory model's caches."""
        self.keep_hash()
        object.__setattr__(
            self, "_profile", dtype_profile(self.precision, self.method, self.qlora_upcast, self.sharding)
        )

    def __hash__(self) -> int:
        """The fields' hash, computed at creation."""
        return self._hash_once

    @property
    def dp(self) -> int:
        """Data-parallel degree."""
        return self.gpus // (self.tp * self.pp)

    @property
    def adapters(self) -> bool:
        """True for LoRA and QLoRA."""
        return self.method in ("lora", "qlora")

    @property
    def deepspeed(self) -> bool:
        """True under a DeepSpeed ZeRO stage (its bf16/fp16 mode casts the module itself to 16-bit)."""
        return self.sharding in ("zero1", "zero2", "zero3")

    @property
    def profile(self) -> str:
        """Dtype profile of weights and the residual stream (`dtype_profile`, decided at creation)."""
        return self._profile


SETUP_FIELDS = tuple(item.name for item in fields(Setup))
"""Setup's field names in field order (its __slots__, in the same order)."""
_FIELD_INDEX = {name: index for index, name in enumerate(SETUP_FIELDS)}
_field_values = attrgetter(*SETUP_FIELDS)
_profile_inputs = itemgetter(*(_FIELD_INDEX[name] for name in ("precision", "method", "qlora_upcast", "sharding")))


class SetupKey:
    """A setup that compares and hashes by some of its field values only: the key of a memo whose term reads only
    those fields (the setup rides along to compute the term on a miss)."""

    __slots__ = ("hash", "setup", "values")

    def __init__(self, setup: Setup, values: tuple[Any, ...]) -> None:
        self.setup = setup
        self.values = values
        self.hash = hash(values)

    def __hash__(self) -> int:
        """The hash of the values."""
        return self.hash

    def __eq__(self, other: object) -> bool:
        """Equal when the values are."""
        return isinstance(other, SetupKey) and self.values == other.values


class _Draft(_SetupSlots):
    """Setup's mutable twin, with the same slots in the same order: `changed` fills one with plain slot stores and
    then makes it a Setup (a frozen dataclass stores each field through object.__setattr__, several times the cost,
    and a search copies setups by the hundred)."""

    __slots__ = SETUP_FIELDS


def changed(setup: Setup, changes: dict[str, object]) -> Setup:
    """A copy of `setup` with some fields changed: equal to, hashing as and profiled as Setup(...) of the same
    values, built without its keyword __init__."""
    values = list(_field_values(setup))
    for name, value in changes.items():
        values[_FIELD_INDEX[name]] = value
    draft: Any = _Draft()
    (  # every field, in SETUP_FIELDS order (a field added to Setup makes this unpacking fail)
        draft.arch,
        draft.method,
        draft.precision,
        draft.optimizer,
        draft.batch,
        draft.seq,
        draft.checkpointing,
        draft.flash,
        draft.lora_modules,
        draft.rank,
        draft.gpus,
        draft.sharding,
        draft.tp,
        draft.pp,
        draft.offload,
        draft.loss,
        draft.context_bytes,
        draft.optimizer_impl,
        draft.qlora_upcast,
    ) = values
    draft._profile = dtype_profile(*_profile_inputs(values))
    draft._hash_once = hash(tuple(values))  # HashSlot.keep_hash's figure: the field values' hash
    draft.__class__ = Setup
    return draft  # type: ignore[no-any-return]


def lora_modules(targets: str, arch: ModelArch) -> tuple[str, ...]:
    """Expand a LoRA target list into module names present in `arch`."""
    names: list[str] = []
    for raw in targets.replace(" ", ",").split(","):
        token = raw.strip().lower()
        if not token:
            continue
        token = LORA_TARGET_ALIASES.get(token, token)
        for part in token.split(","):
            names.extend(LORA_TARGET_GROUPS.get(part, (part,)))
    shapes = arch.linear_shapes
    unknown = [n for n in names if n not in LORA_TARGET_GROUPS["all-linear"]]
    if unknown:
        raise ValueError(
            f"unknown LoRA target module(s) {', '.join(unknown)}; use all-linear or q_proj, k_proj, "
            "v_proj, o_proj, gate_proj, up_proj, down_proj"
        )
    present = tuple(dict.fromkeys(n for n in names if n in shapes))
    if not present:
        raise ValueError(f"none of the LoRA targets '{targets}' exist in {arch.name}")
    return present


def resolve_arch(request: EstimateRequest) -> ModelArch:
    """The architecture the request names: config.json first, then the registry, then a generic decoder of the
    stated size (or the size in an unknown name, 'Qwen4-9B'); Estimate.unknown_model then carries the name."""
    if request.config_path and request.config_path.strip():
        return load_hf_config(Path(request.config_path))
    if request.model and request.model.strip():
        known = lookup(request.model)
        if known is not None:
            return known
        size = request.params_b or size_from_name(request.model)
        if size is None:
            resolve(request.model)  # raises, naming close matches
        return generic_decoder(size)  # type: ignore[arg-type]
    if request.params_b is None:
        raise ValueError("give a model name, a config.json path or a size in billions of parameters")
    return generic_decoder(request.params_b)


def degrees_fit(arch: ModelArch, tp: int, pp: int) -> bool:
    """Whether the model can be split `tp` ways and into `pp` stages (what check_degrees refuses, without raising)."""
    heads_split = arch.approximate or not (arch.heads % tp or (arch.kv_heads % tp and tp % arch.kv_heads))
    return heads_split and not (pp > 1 and pp > arch.layers)


def check_degrees(arch: ModelArch, tp: int, pp: int) -> None:
    """ValueError when the model cannot be split `tp` ways (attention and KV heads) or into `pp` stages."""
    if not arch.approximate and (arch.heads % tp or (arch.kv_heads % tp and tp % arch.kv_heads)):
        raise ValueError(
            f"tensor parallel degree {tp} does not divide {arch.heads} attention heads / "
            f"{arch.kv_heads} key-value heads of {arch.name}"
        )
    if pp > 1 and pp > arch.layers:  # pp 1 is no pipeline: fine for any model, even a tiny generic one
        raise ValueError(
            f"pipeline parallel degree {pp} exceeds the {max(1, int(arch.layers))} layer(s) of {arch.name}"
        )


def build_setup(request: EstimateRequest, arch: ModelArch) -> Setup:
    """Validate the request against the architecture and fill defaults."""
    tp, pp = request.tensor_parallel, request.pipeline_parallel
    check_degrees(arch, tp, pp)
    adapters = request.method in ("lora", "qlora")
    precision = request.precision or ("bf16" if adapters else "amp_bf16")
    return Setup(
        arch=arch,
        method=request.method,
        precision=precision,
        optimizer=request.optimizer,
        batch=request.micro_batch_size,
        seq=request.seq_len,
        checkpointing=request.gradient_checkpointing,
        flash=request.flash_attention,
        lora_modules=lora_modules(request.lora_targets, arch) if adapters else (),
        rank=request.lora_rank,
        gpus=request.num_gpus,
        sharding=request.sharding,
        tp=tp,
        pp=pp,
        offload=request.offload,
        loss=request.loss,
        context_bytes=request.cuda_context_gib * GIB,
        optimizer_impl=request.optimizer_impl,
        qlora_upcast=request.qlora_upcast,
    )


@lru_cache(maxsize=1024)
def lora_params(arch: ModelArch, modules: tuple[str, ...], rank: int) -> int:
    """Adapter parameter count: r x (in + out) per targeted linear, routed and shared experts included (exact for
    dense models and uniform mixtures of experts)."""
    shapes = arch.linear_shapes
    per_layer = 0.0
    for name in modules:
        d_in, d_out = shapes[name]
        copies = arch.mlp_copies if name in ("gate_proj", "up_proj", "down_proj") else 1
        per_layer += copies * rank * (d_in + d_out)
    return round(per_layer * arch.layers)


def stage_layers(arch: ModelArch, pp: int) -> float:
    """Layers on the most loaded pipeline stage (all of them without pipeline parallelism)."""
    return arch.layers if pp == 1 else -(-arch.layers // pp)
