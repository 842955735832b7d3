"""VRAM estimator: per-GPU peak training memory with a breakdown, fit check, limits and ranked fixes.

Model: the peak is the larger of two phases, each a sum of live tensors (bytes):
  forward/backward = weights (+ autocast half copies) + optimizer state + transient buffers
                     + max(all activations + logits + head gradient, all gradients + one layer of activations)
  optimizer step   = weights + gradients + optimizer state + optimizer temporaries
Sharding follows the frameworks: DeepSpeed ZeRO-1/2/3 byte rules, FSDP FULL_SHARD units, Megatron-style TP/PP
shards. `allocated_gib` is what torch.cuda.max_memory_allocated would show; `per_gpu_gib` is what nvidia-smi would
show (plus CUDA context, NCCL buffers and the caching allocator's reserve). Sources: evals/calibration/SOURCES.md
and ../shared/reference/memory-formulas.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from contract.jobspec import MAX_SEQ_LEN, JobSpec, Method, Optimizer, Precision
from tools.models import ModelArch, generic_decoder, load_hf_config, resolve

GIB = 1024**3
Sharding = Literal["none", "ddp", "zero1", "zero2", "zero3", "fsdp"]
Offload = Literal["none", "optimizer", "optimizer+params"]

CUDA_CONTEXT_GIB = 0.55
"""CUDA context + kernels with lazy module loading (HF measured 1.3 GB without it on V100; 0.3-2 GiB reported)."""
NCCL_GIB = 0.45
"""NCCL communicator buffers per GPU when more than one GPU takes part."""
ALLOCATOR_RESERVE_FRACTION = 0.05
"""Caching-allocator blocks reserved beyond the allocated peak (fragmentation, block rounding)."""
ALLOCATOR_RESERVE_MIN_GIB = 0.1
NF4_BYTES_PER_PARAM = (4 + 8 / 64 + 32 / (64 * 256)) / 8
"""NF4 with double quantisation: 4 bits + 8-bit absmax per 64 + fp32 per 256 absmax blocks (QLoRA paper)."""
ADAM8BIT_BYTES_PER_PARAM = 2 + 8 / 256
"""bitsandbytes 8-bit Adam: two uint8 states + fp32 absmax per 256-value block."""
LOGIT_BYTES_PER_VOCAB = {"fp32": 12, "half": 6, "fused": 0}
"""Loss-head bytes per token and vocabulary entry at the start of backward. 'fp32': log-softmax output, its gradient
and the gradient of the upcast logits, all fp32 (transformers upcasts logits for the loss); 'half': the same in
16-bit (older GPT-BigCode and other models computing the loss on 16-bit logits); 'fused': a fused linear
cross-entropy kernel (Liger, Cut Cross-Entropy) that never materialises the full logits."""
Loss = Literal["fp32", "half", "fused"]
LORA_TARGET_GROUPS = {
    "all-linear": ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"),
    "attention": ("q_proj", "k_proj", "v_proj", "o_proj"),
    "mlp": ("gate_proj", "up_proj", "down_proj"),
}
LORA_TARGET_ALIASES = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj", "gate": "gate_proj",
                       "up": "up_proj", "down": "down_proj", "c_attn": "q_proj,k_proj,v_proj", "c_proj": "o_proj",
                       "c_fc": "up_proj", "fc1": "up_proj", "fc2": "down_proj", "query": "q_proj", "key": "k_proj",
                       "value": "v_proj", "dense": "o_proj", "w1": "gate_proj", "w3": "up_proj", "w2": "down_proj",
                       "all": "all-linear", "all_linear": "all-linear"}


class EstimateRequest(BaseModel):
    """Everything the estimator needs; defaults are the common Hugging Face training setup."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(default=None, description="Registry name, e.g. 'llama-3.1-8b' or an HF repo id.")
    config_path: str | None = Field(default=None, description="Path to a HuggingFace config.json.")
    params_b: float | None = Field(default=None, gt=0, le=100_000, allow_inf_nan=False,
                                   description="Size in billions when the model is not in the registry.")
    method: Method = "full_finetune"
    precision: Precision | None = Field(default=None, description="Default amp_bf16 for full training, bf16 for LoRA.")
    optimizer: Optimizer = "adamw"
    micro_batch_size: int = Field(default=1, ge=1, le=1_000_000)
    seq_len: int = Field(default=2048, ge=1, le=MAX_SEQ_LEN)
    gradient_checkpointing: bool = False
    flash_attention: bool = True
    lora_rank: int = Field(default=16, ge=1, le=65_536)
    lora_targets: str = Field(default="all-linear", description="'all-linear' or module names: q_proj,v_proj,...")
    num_gpus: int = Field(default=1, ge=1, le=100_000)
    sharding: Sharding = "none"
    tensor_parallel: int = Field(default=1, ge=1, le=1024)
    pipeline_parallel: int = Field(default=1, ge=1, le=1024)
    offload: Offload = "none"
    loss: Loss = Field(default="fp32", description="How the loss treats logits: fp32 upcast (HF), half, fused kernel.")
    cuda_context_gib: float = Field(default=CUDA_CONTEXT_GIB, ge=0, le=16, allow_inf_nan=False,
                                    description="CUDA context and kernels per process, in GiB.")
    gpu: str | None = Field(default=None, description="GPU name to check the fit against, e.g. 'A100-80GB'.")
    vram_gib: float | None = Field(default=None, gt=0, le=100_000, allow_inf_nan=False,
                                   description="Usable memory per GPU to check the fit against.")

    @model_validator(mode="after")
    def _check_layout(self) -> EstimateRequest:
        """Reject inconsistent parallel layouts with a message naming the problem."""
        if not (self.model or "").strip() and not (self.config_path or "").strip() and self.params_b is None:
            raise ValueError("give a model name, a config.json path or a size in billions of parameters")
        model_parallel = self.tensor_parallel * self.pipeline_parallel
        if self.num_gpus % model_parallel:
            raise ValueError(f"{self.num_gpus} GPUs cannot be split into tensor x pipeline groups of "
                             f"{self.tensor_parallel} x {self.pipeline_parallel}")
        if self.offload != "none" and self.sharding not in ("zero1", "zero2", "zero3", "fsdp"):
            raise ValueError("offload needs a ZeRO stage or FSDP (e.g. --sharding zero2 --offload optimizer)")
        if self.offload == "optimizer+params" and self.sharding not in ("zero3", "fsdp"):
            raise ValueError("offloading parameters needs ZeRO-3 or FSDP")
        return self


class Fix(BaseModel):
    """One change that lowers memory, with the per-GPU memory it would reach."""

    code: str
    description: str
    changes: dict[str, object]
    per_gpu_gib: float
    fits: bool


class FitReport(BaseModel):
    """How the estimate compares with one GPU's memory, and what to change when it does not fit."""

    gpu: str | None
    vram_gib: float
    fits: bool
    headroom_gib: float
    max_micro_batch_size: int | None
    max_seq_len: int | None
    fixes: list[Fix]


class Estimate(BaseModel):
    """Per-GPU peak memory for one training configuration."""

    model_id: str
    model_name: str
    approximate: bool
    method: Method
    precision: Precision
    allocated_gib: float = Field(description="Peak tensors, as torch.cuda.max_memory_allocated reports.")
    reserved_gib: float = Field(description="As torch.cuda.max_memory_reserved reports: allocated + allocator reserve.")
    per_gpu_gib: float = Field(description="As nvidia-smi reports: reserved + CUDA context (+ NCCL buffers).")
    breakdown_gib: dict[str, float] = Field(description="Terms at the peak phase; they add up to per_gpu_gib.")
    peak_phase: Literal["forward_backward", "optimizer_step"]
    total_params: int
    trainable_params: int
    active_params: int
    host_ram_gib: float | None
    assumptions: list[str]
    fit: FitReport | None = None


@dataclass(frozen=True, kw_only=True)
class _Setup:
    """The request resolved into plain numbers the memory terms are computed from."""

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
        """Dtype profile of weights and the residual stream: 'fp32', 'mixed' (fp32 weights/residual, 16-bit
        matmuls: torch autocast, or HF QLoRA recipes, which keep the non-quantised modules in fp32) or 'half'."""
        if self.precision == "fp32":
            return "fp32"
        if self.method == "qlora":
            return "mixed"
        if self.precision in ("amp_bf16", "amp_fp16") and not self.deepspeed:
            return "mixed"
        return "half"


def _lora_modules(targets: str, arch: ModelArch) -> tuple[str, ...]:
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
        raise ValueError(f"unknown LoRA target module(s) {', '.join(unknown)}; use all-linear or q_proj, k_proj, "
                         "v_proj, o_proj, gate_proj, up_proj, down_proj")
    present = tuple(dict.fromkeys(n for n in names if n in shapes))
    if not present:
        raise ValueError(f"none of the LoRA targets '{targets}' exist in {arch.name}")
    return present


def resolve_arch(request: EstimateRequest) -> ModelArch:
    """The architecture the request names: config.json first, then the registry, then a generic shape."""
    if (request.config_path or "").strip():
        return load_hf_config(Path(request.config_path))
    if (request.model or "").strip():
        return resolve(request.model)
    if request.params_b is None:
        raise ValueError("give a model name, a config.json path or a size in billions of parameters")
    return generic_decoder(request.params_b)


def _setup(request: EstimateRequest, arch: ModelArch) -> _Setup:
    """Validate the request against the architecture and fill defaults."""
    tp, pp = request.tensor_parallel, request.pipeline_parallel
    if not arch.approximate and (arch.heads % tp or (arch.kv_heads % tp and tp % arch.kv_heads)):
        raise ValueError(f"tensor parallel degree {tp} does not divide {arch.heads} attention heads / "
                         f"{arch.kv_heads} key-value heads of {arch.name}")
    if pp > arch.layers:
        raise ValueError(f"pipeline parallel degree {pp} exceeds the {arch.layers} layers of {arch.name}")
    adapters = request.method in ("lora", "qlora")
    precision = request.precision or ("bf16" if adapters else "amp_bf16")
    return _Setup(arch=arch, method=request.method, precision=precision, optimizer=request.optimizer,
                  batch=request.micro_batch_size, seq=request.seq_len, checkpointing=request.gradient_checkpointing,
                  flash=request.flash_attention,
                  lora_modules=_lora_modules(request.lora_targets, arch) if adapters else (),
                  rank=request.lora_rank, gpus=request.num_gpus, sharding=request.sharding, tp=tp, pp=pp,
                  offload=request.offload, loss=request.loss, context_bytes=request.cuda_context_gib * GIB)


def lora_params(arch: ModelArch, modules: tuple[str, ...], rank: int) -> int:
    """Exact adapter parameter count: r x (in + out) per targeted linear, experts included."""
    shapes = arch.linear_shapes
    per_layer = 0
    for name in modules:
        d_in, d_out = shapes[name]
        copies = arch.num_experts if name in ("gate_proj", "up_proj", "down_proj") else 1
        per_layer += copies * rank * (d_in + d_out)
    return round(per_layer * arch.layers)


def _stage_layers(arch: ModelArch, pp: int) -> float:
    """Layers on the most loaded pipeline stage (all of them without pipeline parallelism)."""
    return arch.layers if pp == 1 else -(-arch.layers // pp)


def _shard_params(arch: ModelArch, tp: int, pp: int) -> float:
    """Parameters held by the most loaded tensor/pipeline shard (first stage: embeddings + its layers)."""
    layers_per_stage = _stage_layers(arch, pp)
    first = arch.embedding_params + layers_per_stage * arch.layer_params + (
        arch.head_params + arch.final_params if pp == 1 else 0)
    last = layers_per_stage * arch.layer_params + arch.head_params + arch.final_params + (
        arch.vocab * arch.hidden if pp > 1 and arch.tied_embeddings else 0)
    return max(first, last) / tp


def _optimizer_bytes(setup: _Setup, trainable: float) -> float:
    """Optimizer state bytes for `trainable` parameters."""
    half_states = setup.precision in ("bf16", "fp16") and not setup.adapters
    if setup.optimizer == "adamw":
        return trainable * (4 if half_states else 8)
    if setup.optimizer in ("adamw_8bit", "paged_adamw_8bit"):
        return trainable * ADAM8BIT_BYTES_PER_PARAM
    if setup.optimizer == "sgd":
        return trainable * (2 if half_states else 4)
    # Adafactor: factored second moments, one row and one column vector per matrix, no momentum.
    arch = setup.arch
    if setup.adapters:
        return 4 * len(setup.lora_modules) * arch.layers * 2 * setup.rank
    matrices = sum(a + b for a, b in arch.linear_shapes.values()) * arch.layers
    return 4 * (matrices + 2 * (arch.vocab + arch.hidden)) * trainable / max(arch.total_params, 1)


NORM_BYTES = {"fp32": 12, "mixed": 10, "half": 8}
"""Bytes an RMSNorm keeps per element: fp32 input copy, normalised output and the weighted output that the next
linear saves (in its compute dtype)."""
RESIDUAL_BYTES = {"fp32": 4, "mixed": 4, "half": 2}
"""Bytes per element of the residual stream between blocks (what gradient checkpointing keeps per layer)."""


def _layer_activation_bytes_per_token(setup: _Setup) -> float:
    """Activation bytes one transformer block saves for backward, per token (no recompute)."""
    arch, a = setup.arch, (4 if setup.profile == "fp32" else 2)
    h, q, kv, inter = arch.hidden, arch.q_dim, arch.kv_dim, arch.intermediate
    norms = arch.norms_per_layer * h * (NORM_BYTES[setup.profile] if arch.norm == "rms" else 2 * a)
    attention = a * (q + 2 * kv) + a * q  # q, k, v after RoPE + attention output
    if not setup.adapters or "o_proj" in setup.lora_modules:
        attention += a * q  # o_proj input copy (frozen, untargeted linears do not save their input)
    if not setup.flash:
        attention += arch.heads * setup.seq * (4 + (a if a == 2 else 0))  # fp32 softmax (+ half copy)
        if arch.dropout:
            attention += arch.heads * setup.seq * (1 + a)
    experts = arch.experts_per_token
    if arch.mlp == "gated":
        mlp = 3 * a * inter  # gate output, activation output, up output
        if not setup.adapters or "down_proj" in setup.lora_modules:
            mlp += a * inter  # down_proj input (product)
    else:
        mlp = a * inter
        if not setup.adapters or "down_proj" in setup.lora_modules:
            mlp += a * inter
    mlp = experts * mlp + (experts * a * h if arch.num_experts > 1 else 0)
    dropout = 2 * h if arch.dropout else 0
    lora = a * setup.rank * len(setup.lora_modules)
    return norms + attention + mlp + dropout + lora


def _activations(setup: _Setup) -> tuple[float, float]:
    """(activation bytes alive at the start of backward incl. logits, bytes of one recomputed layer).

    With pipeline parallelism (1F1B) the first stage keeps `pp` micro-batches of its L/pp layers in flight; the last
    stage keeps one micro-batch of its layers plus the logits. The larger of the two is the peak.
    """
    arch = setup.arch
    tokens = setup.batch * setup.seq
    per_layer = _layer_activation_bytes_per_token(setup) * tokens / setup.tp
    stage_layers = _stage_layers(arch, setup.pp)
    head = arch.hidden * tokens * NORM_BYTES[setup.profile] / setup.tp + _logit_bytes(setup)
    if setup.checkpointing:
        # Layer inputs are kept; the loss head's tensors are gone before the first layer is recomputed.
        per_stored_layer = RESIDUAL_BYTES[setup.profile] * arch.hidden * tokens / setup.tp
        first_stage = stage_layers * setup.pp * per_stored_layer + per_layer
        last_stage = stage_layers * per_stored_layer + max(per_layer, head)
        if setup.pp == 1:
            return stage_layers * per_stored_layer + max(per_layer, head), per_layer
    else:
        first_stage = stage_layers * setup.pp * per_layer
        last_stage = stage_layers * per_layer + head
        if setup.pp == 1:
            return last_stage, per_layer
    return max(first_stage, last_stage), per_layer


def _logit_bytes(setup: _Setup) -> float:
    """Loss-head bytes at the start of backward (fp32 log-softmax output and gradients over the vocabulary)."""
    if setup.arch.family == "bert":
        return 0.0
    return LOGIT_BYTES_PER_VOCAB[setup.loss] * setup.arch.vocab * setup.batch * setup.seq / setup.tp


@dataclass(frozen=True, kw_only=True)
class _States:
    """Model-state bytes per GPU."""

    weights: float
    autocast_copies: float
    gradients: float
    optimizer: float
    gathered: float
    step_temporary: float
    host: float


def _states(setup: _Setup, trainable: int) -> _States:
    """Weights, gradients and optimizer state per GPU under the requested precision and sharding."""
    arch = setup.arch
    shard = _shard_params(arch, setup.tp, setup.pp)
    mp = setup.tp * setup.pp
    trainable_shard = trainable / mp if setup.adapters else shard
    dp = setup.dp if setup.sharding not in ("none", "ddp") else 1
    amp = setup.precision in ("amp_bf16", "amp_fp16")
    weight_bytes = 2 if setup.profile == "half" else 4
    # Frozen or trained base weights.
    if setup.method == "qlora":
        linear = arch.linear_params_per_layer * arch.layers / mp
        base = linear * NF4_BYTES_PER_PARAM + (shard - linear) * weight_bytes
    else:
        base = shard * weight_bytes
    adapter_weights = trainable_shard * 4 if setup.adapters else 0.0
    grad_bytes = 4 if (setup.adapters or amp or setup.precision == "fp32") else 2
    gradients = trainable_shard * grad_bytes
    optimizer = _optimizer_bytes(setup, trainable_shard)
    autocast = shard * 2 if setup.profile == "mixed" and setup.method != "qlora" else 0.0
    largest_unit = max(arch.layer_params, arch.embedding_params, arch.head_params) / mp
    gathered = 0.0
    host = 0.0
    step_temporary = 0.0
    foreach_adam = setup.optimizer == "adamw" and setup.sharding not in ("zero1", "zero2", "zero3")
    if foreach_adam:
        step_temporary = optimizer / 2  # torch foreach AdamW: one temporary the size of one state
    weights = base + adapter_weights
    if setup.sharding in ("zero1", "zero2", "zero3") and not setup.adapters and amp:
        # DeepSpeed mixed precision: 16-bit params and grads, fp32 master + fp32 grad partition + Adam states.
        weights, autocast = shard * 2, 0.0
        master = shard * 4
        fp32_grads = shard * 4
        if setup.sharding == "zero1":
            gradients = shard * 2 + fp32_grads / dp
            optimizer = (master + optimizer) / dp
        elif setup.sharding == "zero2":
            gradients = (shard * 2 + fp32_grads) / dp
            optimizer = (master + optimizer) / dp
        else:
            # DeepSpeed's ZeRO-3 rule: 18 bytes/param over N (16-bit param and fp32 grad partitions, fp32 master and
            # Adam states) plus the gathered largest layer.
            weights, gradients, optimizer = shard * 2 / dp, fp32_grads / dp, (master + optimizer) / dp
            gathered = 4 * largest_unit
    elif setup.sharding in ("zero1", "zero2"):
        optimizer /= dp
        if setup.sharding == "zero2":
            gradients /= dp
    elif setup.sharding in ("zero3", "fsdp"):
        weights, gradients, optimizer, step_temporary = (weights / dp, gradients / dp, optimizer / dp,
                                                         step_temporary / dp)
        if setup.sharding == "zero3":
            gathered = 4 * largest_unit
        else:
            unit_bytes = 4 if setup.precision == "fp32" else 2
            root = (arch.embedding_params + arch.head_params + arch.final_params) / mp
            if setup.method == "qlora":
                gathered = root * 2 + 3 * arch.linear_params_per_layer / mp * NF4_BYTES_PER_PARAM
            else:
                gathered = unit_bytes * (root + 3 * arch.layer_params / mp)
        autocast = autocast / dp if setup.sharding == "zero3" else 0.0
    if setup.offload != "none":
        host += (optimizer + gradients) * 1.5
        optimizer, step_temporary = 0.0, 0.0
        gradients = gradients * (2 / grad_bytes) / max(dp, 1) if setup.sharding != "fsdp" else 0.0
        if setup.offload == "optimizer+params":
            host += weights * 1.5
            weights = 0.0
    elif setup.sharding == "ddp" and setup.gpus > 1:
        gathered = gradients  # DDP bucket copies of the gradients (gradient_as_bucket_view=False)
    if setup.method == "qlora":
        gathered += 2 * max(a * b for a, b in arch.linear_shapes.values())  # dequantised weight
    return _States(weights=weights, autocast_copies=autocast, gradients=gradients, optimizer=optimizer,
                   gathered=gathered, step_temporary=step_temporary, host=host)


def _gib(value: float) -> float:
    """Bytes to GiB rounded for display."""
    return round(value / GIB, 3)


def _precision_note(setup: _Setup) -> str:
    """What the precision means for weights and activations."""
    if setup.method == "qlora":
        return f"QLoRA: 4-bit base, {setup.precision} compute, fp32 residual stream"
    return f"precision {setup.precision}: " + {"fp32": "fp32 weights and activations",
                                               "mixed": "fp32 weights and residual stream, 16-bit matmuls",
                                               "half": "16-bit weights and activations"}[setup.profile]


def _assumptions(setup: _Setup, arch: ModelArch) -> list[str]:
    """The stated assumptions behind one estimate."""
    notes = [
        _precision_note(setup),
        "FlashAttention/SDPA (no s^2 score matrices)" if setup.flash else "eager attention (s^2 scores kept)",
        {"fp32": "HF-style loss: logits upcast to fp32 for cross-entropy", "half": "loss on 16-bit logits",
         "fused": "fused linear cross-entropy (no full logits tensor)"}[setup.loss],
        f"CUDA context {setup.context_bytes / GIB:g} GiB; allocator reserve {int(ALLOCATOR_RESERVE_FRACTION * 100)} % of the "
        "peak plus one fp32-logits-sized segment" + (f"; NCCL {NCCL_GIB} GiB" if setup.gpus > 1 else ""),
    ]
    if setup.optimizer == "adamw" and setup.sharding not in ("zero1", "zero2", "zero3"):
        notes.append("torch AdamW foreach implementation (one state-sized temporary in the step)")
    if setup.adapters:
        notes.append(f"LoRA rank {setup.rank} on {', '.join(setup.lora_modules)}; adapters, their gradients and "
                     "Adam states in fp32 (PEFT default)")
    if setup.method == "qlora":
        notes.append("NF4 base with double quantisation; embeddings, head and norms in "
                     + ("fp32 (prepare_model_for_kbit_training)" if setup.profile == "mixed" else "16-bit"))
    if setup.checkpointing:
        notes.append("gradient checkpointing per decoder layer (layer inputs kept, one layer recomputed at a time)")
    if arch.approximate:
        notes.append(f"unknown model: standard Llama-style decoder scaled to {arch.total_params / 1e9:.3g}B "
                     f"parameters (about {arch.layers:.0f} layers, hidden {arch.hidden:.0f}); approximate")
    if setup.sharding in ("zero1", "zero2", "zero3"):
        notes.append(f"DeepSpeed {setup.sharding.upper()} byte rules over {setup.dp} data-parallel ranks")
    if setup.sharding == "fsdp":
        notes.append(f"FSDP FULL_SHARD over {setup.dp} ranks, decoder layers as units, backward prefetch")
    if setup.sharding == "ddp" and setup.gpus > 1:
        notes.append("DDP gradient buckets copy the gradients")
    return notes


def _peak(setup: _Setup) -> tuple[dict[str, float], str, float, int]:
    """Peak memory terms (bytes) at the dominant phase, its name, host RAM bytes and trainable params."""
    arch = setup.arch
    trainable = lora_params(arch, setup.lora_modules, setup.rank) if setup.adapters else arch.total_params
    states = _states(setup, trainable)
    acts, one_layer = _activations(setup)
    head_gradient = 0.0 if setup.adapters else states.gradients * arch.vocab * arch.hidden / max(arch.total_params, 1)
    start_of_backward = acts + head_gradient
    end_of_backward = states.gradients + one_layer
    forward_backward = {
        "weights": states.weights + states.autocast_copies,
        "gradients": head_gradient if start_of_backward >= end_of_backward else states.gradients,
        "optimizer": states.optimizer,
        "activations": acts if start_of_backward >= end_of_backward else one_layer,
        "temporary": states.gathered,
    }
    step = {
        "weights": states.weights,
        "gradients": states.gradients,
        "optimizer": states.optimizer,
        "activations": 0.0,
        "temporary": states.step_temporary,
    }
    if sum(step.values()) > sum(forward_backward.values()):
        return step, "optimizer_step", states.host, trainable
    return forward_backward, "forward_backward", states.host, trainable


def _allocator_reserve(allocated: float, setup: _Setup) -> float:
    """max_memory_reserved minus max_memory_allocated (bytes): a share of the peak for block rounding and
    fragmentation, plus one segment the size of the largest transient tensor (the fp32 logits), which the caching
    allocator keeps once a later request cannot reuse it."""
    largest_transient = _logit_bytes(setup) / 3
    return max(ALLOCATOR_RESERVE_MIN_GIB * GIB, ALLOCATOR_RESERVE_FRACTION * allocated + largest_transient)


def _overhead(allocated: float, setup: _Setup) -> float:
    """nvidia-smi minus allocated: allocator reserve, CUDA context, NCCL buffers (bytes)."""
    nccl = NCCL_GIB * GIB if setup.gpus > 1 else 0.0
    return _allocator_reserve(allocated, setup) + setup.context_bytes + nccl


def _per_gpu_bytes(setup: _Setup) -> float:
    """nvidia-smi-level per-GPU bytes of a setup (used by the searches)."""
    terms, _, _, _ = _peak(setup)
    allocated = sum(terms.values())
    return allocated + _overhead(allocated, setup)


def _replace(setup: _Setup, **changes: object) -> _Setup:
    """A copy of `setup` with some fields changed."""
    values = {f: getattr(setup, f) for f in setup.__dataclass_fields__}
    values.update(changes)
    return _Setup(**values)  # type: ignore[arg-type]


def _largest_fitting(setup: _Setup, field: str, vram_bytes: float, upper: int) -> int | None:
    """Largest value of an integer field (micro-batch or sequence length) whose estimate fits, by bisection."""
    if _per_gpu_bytes(_replace(setup, **{field: 1})) > vram_bytes:
        return None
    low, high = 1, upper
    if _per_gpu_bytes(_replace(setup, **{field: high})) <= vram_bytes:
        return high
    while high - low > 1:
        mid = (low + high) // 2
        if _per_gpu_bytes(_replace(setup, **{field: mid})) <= vram_bytes:
            low = mid
        else:
            high = mid
    return low


@dataclass(frozen=True, kw_only=True)
class _Candidate:
    """A memory-saving change: its request-level fields and the same change on a _Setup."""

    code: str
    description: str
    changes: dict[str, object]
    setup_changes: dict[str, object]


def _all_linear(arch: ModelArch) -> tuple[str, ...]:
    """LoRA 'all-linear' targets present in `arch`."""
    return tuple(m for m in LORA_TARGET_GROUPS["all-linear"] if m in arch.linear_shapes)


def _candidate_fixes(setup: _Setup) -> list[_Candidate]:
    """Changes that lower memory, cheapest first (free, then compute, then quality, then hardware)."""
    fixes: list[_Candidate] = []
    if setup.batch > 1:
        fixes.append(_Candidate(code="micro_batch_1", description="micro-batch 1 with gradient accumulation "
                                "(same effective batch)", changes={"micro_batch_size": 1}, setup_changes={"batch": 1}))
    if not setup.flash:
        fixes.append(_Candidate(code="flash_attention", description="use FlashAttention / SDPA",
                                changes={"flash_attention": True}, setup_changes={"flash": True}))
    if not setup.checkpointing:
        fixes.append(_Candidate(code="gradient_checkpointing", description="turn on gradient checkpointing "
                                "(about 30 % more compute)", changes={"gradient_checkpointing": True},
                                setup_changes={"checkpointing": True}))
    if setup.optimizer == "adamw":
        fixes.append(_Candidate(code="adamw_8bit", description="8-bit AdamW (bitsandbytes)",
                                changes={"optimizer": "adamw_8bit"}, setup_changes={"optimizer": "adamw_8bit"}))
    if setup.method == "full_finetune":
        fixes.append(_Candidate(code="lora", description="LoRA (rank 16, all linear layers) instead of full "
                                "fine-tuning", changes={"method": "lora", "precision": "bf16"},
                                setup_changes={"method": "lora", "precision": "bf16", "rank": 16,
                                               "lora_modules": _all_linear(setup.arch)}))
    if setup.method in ("full_finetune", "lora"):
        fixes.append(_Candidate(code="qlora", description="QLoRA (4-bit base) instead",
                                changes={"method": "qlora", "precision": "bf16"},
                                setup_changes={"method": "qlora", "precision": "bf16",
                                               "rank": setup.rank if setup.adapters else 16,
                                               "lora_modules": setup.lora_modules or _all_linear(setup.arch)}))
    if setup.gpus > 1 and setup.sharding in ("none", "ddp", "zero1", "zero2"):
        fixes.append(_Candidate(code="zero3", description=f"shard weights, gradients and optimizer state over the "
                                f"{setup.gpus} GPUs (ZeRO-3/FSDP)", changes={"sharding": "zero3"},
                                setup_changes={"sharding": "zero3"}))
    if setup.gpus == 1 and not setup.adapters and setup.offload == "none":
        fixes.append(_Candidate(code="offload", description="ZeRO-Offload: optimizer state in CPU RAM (slower steps)",
                                changes={"sharding": "zero2", "offload": "optimizer"},
                                setup_changes={"sharding": "zero2", "offload": "optimizer"}))
    return fixes


CHEAP_FIX_CODES = ("micro_batch_1", "flash_attention", "gradient_checkpointing", "adamw_8bit")
"""Fixes that keep the method and hardware; the 'combined' fix stacks them."""


def _more_gpus_fix(setup: _Setup, vram_bytes: float, cheap: _Candidate | None) -> _Candidate | None:
    """The smallest power-of-two GPU count (up to 512) that fits with ZeRO-3 sharding, alone or on top of the cheap
    fixes when sharding alone cannot fit (activations do not shrink with more GPUs)."""
    sharding = setup.sharding if setup.sharding in ("zero3", "fsdp") else "zero3"
    for extra in ({}, cheap.setup_changes if cheap else None):
        if extra is None:
            continue
        count = max(2, setup.gpus * 2)
        while count <= 512:
            changes = extra | {"gpus": count, "sharding": sharding}
            if _per_gpu_bytes(_replace(setup, **changes)) <= vram_bytes:
                request_changes = (cheap.changes if extra else {}) | {"num_gpus": count, "sharding": sharding}
                also = f" plus {cheap.description.removeprefix('all of: ')}" if extra and cheap else ""
                return _Candidate(code="more_gpus", description=f"{count} GPUs with ZeRO-3/FSDP sharding{also}",
                                  changes=request_changes, setup_changes=changes)
            count *= 2
    return None


def _fixes(setup: _Setup, vram_bytes: float) -> list[Fix]:
    """Fixes that lower memory: those that fit first (cheapest first), then the rest by memory reached."""
    candidates = _candidate_fixes(setup)
    cheap = [c for c in candidates if c.code in CHEAP_FIX_CODES]
    combined = _Candidate(
        code="combined", description="all of: " + ", ".join(c.description for c in cheap),
        changes={k: v for c in cheap for k, v in c.changes.items()},
        setup_changes={k: v for c in cheap for k, v in c.setup_changes.items()}) if cheap else None
    if combined is not None and len(cheap) > 1:
        candidates.append(combined)
    more = _more_gpus_fix(setup, vram_bytes, combined)
    if more is not None:
        candidates.append(more)
    current = _per_gpu_bytes(setup)
    fixes = []
    for rank, candidate in enumerate(candidates):
        reached = _per_gpu_bytes(_replace(setup, **candidate.setup_changes))
        if reached < current:
            fixes.append((rank, Fix(code=candidate.code, description=candidate.description,
                                    changes=candidate.changes, per_gpu_gib=_gib(reached),
                                    fits=reached <= vram_bytes)))
    fixes.sort(key=lambda item: (not item[1].fits, item[0] if item[1].fits else item[1].per_gpu_gib))
    return [fix for _, fix in fixes]


def _vram_for(request: EstimateRequest) -> tuple[str | None, float | None]:
    """The GPU name and usable GiB the fit is checked against, if any."""
    if request.vram_gib is not None:
        return request.gpu, request.vram_gib
    if request.gpu is None:
        return None, None
    from tools.gpus import lookup_gpu  # the GPU table lives with the catalog

    spec = lookup_gpu(request.gpu)
    if spec is None:
        raise ValueError(f"unknown GPU '{request.gpu}'; give --vram-gib instead")
    return spec.name, float(spec.memory_gib)


def estimate(request: EstimateRequest) -> Estimate:
    """Estimate per-GPU peak memory for `request`, and check the fit when a GPU or VRAM size is given."""
    arch = resolve_arch(request)
    setup = _setup(request, arch)
    terms, phase, host, trainable = _peak(setup)
    allocated = sum(terms.values())
    overhead = _overhead(allocated, setup)
    breakdown = {name: _gib(value) for name, value in terms.items()} | {"overhead": _gib(overhead)}
    result = Estimate(
        model_id=arch.id, model_name=arch.name, approximate=arch.approximate, method=setup.method,  # type: ignore[arg-type]
        precision=setup.precision, allocated_gib=_gib(allocated),
        reserved_gib=_gib(allocated + _allocator_reserve(allocated, setup)), per_gpu_gib=_gib(allocated + overhead),  # type: ignore[arg-type]
        breakdown_gib=breakdown, peak_phase=phase, total_params=arch.total_params, trainable_params=trainable,
        active_params=arch.active_params, host_ram_gib=_gib(host) if host else None,
        assumptions=_assumptions(setup, arch),
    )
    gpu_name, vram = _vram_for(request)
    if vram is not None:
        vram_bytes = vram * GIB
        per_gpu = allocated + overhead
        fits = per_gpu <= vram_bytes
        result.fit = FitReport(
            gpu=gpu_name, vram_gib=vram, fits=fits, headroom_gib=round((vram_bytes - per_gpu) / GIB, 3),
            max_micro_batch_size=_largest_fitting(setup, "batch", vram_bytes, 65_536),
            max_seq_len=_largest_fitting(setup, "seq", vram_bytes, min(MAX_SEQ_LEN, 4 * 1024 * 1024)),
            fixes=[] if fits else _fixes(setup, vram_bytes),
        )
    return result


def request_for_spec(spec: JobSpec, *, num_gpus: int | None = None, sharding: Sharding | None = None,
                     gpu: str | None = None, vram_gib: float | None = None) -> tuple[EstimateRequest, list[str]]:
    """The estimator request a JobSpec implies, and the defaults it had to fill (stated as assumptions): full
    fine-tuning, 2048 tokens, micro-batch 1, gradient checkpointing on (TRL's SFT default), AdamW, FSDP on several
    GPUs."""
    if not spec.model and not spec.params_b:
        raise ValueError("the job needs a model name or a model size in billions of parameters (params_b)")
    filled = []
    if spec.method is None:
        filled.append("method not given: full fine-tuning assumed")
    if spec.seq_len is None:
        filled.append("sequence length not given: 2048 tokens assumed")
    if spec.micro_batch_size is None:
        filled.append("micro-batch size not given: 1 sequence per GPU assumed")
    if spec.gradient_checkpointing is None:
        filled.append("gradient checkpointing not given: on assumed (the usual fine-tuning recipe)")
    gpus = num_gpus or spec.num_gpus or 1
    request = EstimateRequest(
        model=spec.model, params_b=None if spec.model else spec.params_b, method=spec.method or "full_finetune",
        precision=spec.precision, optimizer=spec.optimizer or "adamw", micro_batch_size=spec.micro_batch_size or 1,
        seq_len=spec.seq_len or 2048,
        gradient_checkpointing=True if spec.gradient_checkpointing is None else spec.gradient_checkpointing,
        num_gpus=gpus, sharding=sharding or ("fsdp" if gpus > 1 else "none"), gpu=gpu, vram_gib=vram_gib)
    return request, filled


def estimate_for_spec(spec: JobSpec, *, num_gpus: int | None = None, sharding: Sharding | None = None,
                      gpu: str | None = None, vram_gib: float | None = None) -> Estimate:
    """Estimate for a JobSpec, filling what it leaves open with common defaults (see `request_for_spec`)."""
    request, filled = request_for_spec(spec, num_gpus=num_gpus, sharding=sharding, gpu=gpu, vram_gib=vram_gib)
    result = estimate(request)
    result.assumptions = filled + result.assumptions
    return result
