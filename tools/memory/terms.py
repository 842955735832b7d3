"""Memory terms of one GPU that do not depend on sharding: optimizer state bytes, activations and the loss head."""

from __future__ import annotations

from functools import lru_cache
from operator import attrgetter

from tools.memory.setup import Setup, SetupKey, stage_layers
from tools.models import ModelArch

NF4_BYTES_PER_PARAM = (4 + 8 / 64 + 32 / (64 * 256)) / 8
"""NF4 with double quantisation: 4 bits + 8-bit absmax per 64 + fp32 per 256 absmax blocks (QLoRA paper)."""
ADAM8BIT_BYTES_PER_PARAM = 2 + 8 / 256
"""bitsandbytes 8-bit Adam: two uint8 states + fp32 absmax per 256-value block."""
LOGIT_BYTES_PER_VOCAB = {"fp32": 12, "half": 6, "fused": 0}
"""Loss-head bytes per token and vocabulary entry at the start of backward. 'fp32': log-softmax output, its gradient
and the gradient of the upcast logits, all fp32 (transformers upcasts logits for the loss); 'half': the same in
16-bit (older GPT-BigCode and other models computing the loss on 16-bit logits); 'fused': a fused linear
cross-entropy kernel (Liger, Cut Cross-Entropy) that never materialises the full logits."""


def optimizer_bytes(setup: Setup, trainable: float) -> float:
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


def layer_activation_bytes_per_token(setup: Setup) -> float:
    """Activation bytes one transformer block saves for backward, per token (no recompute)."""
    seq = 0 if setup.flash else setup.seq  # only eager attention's score matrices depend on the sequence
    return _layer_bytes(setup.arch, setup.profile, setup.adapters, setup.lora_modules, setup.flash, seq, setup.rank)


@lru_cache(maxsize=1024)
def _layer_bytes(
    arch: ModelArch, profile: str, adapters: bool, lora_modules: tuple[str, ...], flash: bool, seq: int, rank: int
) -> float:
    """layer_activation_bytes_per_token from the setup fields it reads (memoised: a search varies the others)."""
    a = 4 if profile == "fp32" else 2
    h, q, kv, inter = arch.hidden, arch.q_dim, arch.kv_dim, arch.active_mlp_width
    norms = arch.norms_per_layer * h * (NORM_BYTES[profile] if arch.norm == "rms" else 2 * a)
    attention = a * (q + 2 * kv) + a * q  # q, k, v after RoPE + attention output
    if not adapters or "o_proj" in lora_modules:
        attention += a * q  # o_proj input copy (frozen, untargeted linears do not save their input)
    if not flash:
        attention += arch.heads * seq * (4 + (a if a == 2 else 0))  # fp32 softmax (+ half copy)
        if arch.dropout:
            attention += arch.heads * seq * (1 + a)
    if arch.mlp == "gated":
        mlp = 3 * a * inter  # gate output, activation output, up output
        if not adapters or "down_proj" in lora_modules:
            mlp += a * inter  # down_proj input (product)
    else:
        mlp = a * inter
        if not adapters or "down_proj" in lora_modules:
            mlp += a * inter
    mlp += arch.experts_per_token * a * h if arch.num_experts > 1 else 0  # each routed expert's copy of its tokens
    dropout = 2 * h if arch.dropout else 0
    lora = a * rank * len(lora_modules)
    return norms + attention + mlp + dropout + lora


ACTIVATION_FIELDS = (
    "arch",
    "profile",
    "method",
    "batch",
    "seq",
    "checkpointing",
    "flash",
    "lora_modules",
    "rank",
    "tp",
    "pp",
    "loss",
)
"""The setup fields (and its dtype profile) activations depend on: not the GPU count, sharding, optimizer or
offload, which a layout search varies."""
_activation_fields = attrgetter(*ACTIVATION_FIELDS)


def activations(setup: Setup) -> tuple[float, float]:
    """(activation bytes alive at the start of backward incl. logits, bytes of one recomputed layer).

    With pipeline parallelism (1F1B) the first stage keeps `pp` micro-batches of its L/pp layers in flight; the last
    stage keeps one micro-batch of its layers plus the logits. The larger of the two is the peak. Memoised by
    ACTIVATION_FIELDS.
    """
    return _activations(SetupKey(setup, _activation_fields(setup)))


@lru_cache(maxsize=1024)
def _activations(key: SetupKey) -> tuple[float, float]:
    """activations, computed."""
    setup = key.setup
    arch = setup.arch
    tokens = setup.batch * setup.seq
    per_layer = layer_activation_bytes_per_token(setup) * tokens / setup.tp
    layers = stage_layers(arch, setup.pp)
    head = arch.hidden * tokens * NORM_BYTES[setup.profile] / setup.tp + logit_bytes(setup)
    if setup.checkpointing:
        # Layer inputs are kept; the loss head's tensors are gone before the first layer is recomputed.
        per_stored_layer = RESIDUAL_BYTES[setup.profile] * arch.hidden * tokens / setup.tp
        first_stage = layers * setup.pp * per_stored_layer + per_layer
        last_stage = layers * per_stored_layer + max(per_layer, head)
        if setup.pp == 1:
            return layers * per_stored_layer + max(per_layer, head), per_layer
    else:
        first_stage = layers * setup.pp * per_layer
        last_stage = layers * per_layer + head
        if setup.pp == 1:
            return last_stage, per_layer
    return max(first_stage, last_stage), per_layer


def logit_bytes(setup: Setup) -> float:
    """Loss-head bytes at the start of backward (fp32 log-softmax output and gradients over the vocabulary)."""
    if setup.arch.family == "bert":
        return 0.0
    return LOGIT_BYTES_PER_VOCAB[setup.loss] * setup.arch.vocab * setup.batch * setup.seq / setup.tp
