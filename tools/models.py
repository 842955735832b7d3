"""Model registry: architecture shapes of the models people train, exact parameter counts, forgiving name lookup."""

from __future__ import annotations

import difflib
import json
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

Mlp = Literal["gated", "plain"]
Norm = Literal["rms", "layer"]


@dataclass(frozen=True, kw_only=True)
class ModelArch:
    """Shape of a transformer, enough to count its parameters and size its activations."""

    id: str
    """Registry id, e.g. 'llama-3.1-8b'."""
    name: str
    """Display name, e.g. 'Llama 3.1 8B'."""
    family: str
    """Architecture family: llama, mistral, mixtral, qwen2, gemma2, phi3, gpt2, bert or generic."""
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    tied_embeddings: bool
    mlp: Mlp = "gated"
    """'gated' = SwiGLU/GeGLU with gate, up and down matrices; 'plain' = fc1/fc2 with GELU."""
    norm: Norm = "rms"
    norms_per_layer: int = 2
    qkv_bias: bool = False
    """Bias on q/k/v projections only (Qwen2)."""
    linear_bias: bool = False
    """Bias on every linear layer (GPT-2, BERT)."""
    num_experts: int = 1
    experts_per_token: int = 1
    learned_positions: int = 0
    """Learned absolute position embeddings (GPT-2, BERT); 0 for RoPE models."""
    token_types: int = 0
    """BERT segment embeddings."""
    pooler: bool = False
    """BERT pooler (dense h x h with bias)."""
    embedding_norm: bool = False
    """LayerNorm right after the embeddings (BERT)."""
    dropout: float = 0.0
    """Dropout probability used in training by the reference config."""
    max_context: int = 4096
    approximate: bool = False
    """True when the shape is a standard decoder scaled to a size, not the real model."""
    aliases: tuple[str, ...] = field(default=())

    @property
    def q_dim(self) -> int:
        """Width of the query projection output."""
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        """Width of each of the key and value projection outputs."""
        return self.kv_heads * self.head_dim

    @property
    def norm_params(self) -> int:
        """Parameters of one norm layer (LayerNorm has a bias)."""
        return self.hidden * (2 if self.norm == "layer" else 1)

    @property
    def attention_params(self) -> int:
        """Parameters of one attention block (q, k, v, o projections and their biases)."""
        h, q, kv = self.hidden, self.q_dim, self.kv_dim
        weights = h * q + 2 * h * kv + q * h
        if self.linear_bias:
            return weights + q + 2 * kv + h
        if self.qkv_bias:
            return weights + q + 2 * kv
        return weights

    @property
    def expert_params(self) -> int:
        """Parameters of one MLP (one expert for MoE models)."""
        h, i = self.hidden, self.intermediate
        if self.mlp == "gated":
            return 3 * h * i + (2 * i + h if self.linear_bias else 0)
        return 2 * h * i + (i + h if self.linear_bias else 0)

    @property
    def router_params(self) -> int:
        """Parameters of the MoE router of one layer (0 for dense models)."""
        return self.hidden * self.num_experts if self.num_experts > 1 else 0

    @property
    def layer_params(self) -> int:
        """Parameters of one transformer block."""
        return (self.attention_params + self.num_experts * self.expert_params + self.router_params
                + self.norms_per_layer * self.norm_params)

    @property
    def embedding_params(self) -> int:
        """Input embedding parameters (tokens, positions, segments, embedding norm)."""
        h = self.hidden
        extra = (self.learned_positions + self.token_types) * h
        return self.vocab * h + extra + (self.norm_params if self.embedding_norm else 0)

    @property
    def head_params(self) -> int:
        """Output head parameters not shared with the input embedding (0 when tied or encoder-only)."""
        return 0 if self.tied_embeddings else self.vocab * self.hidden

    @property
    def final_params(self) -> int:
        """Parameters after the last block: final norm and BERT pooler."""
        if self.family == "bert":
            return self.hidden * self.hidden + self.hidden if self.pooler else 0
        return self.norm_params

    @property
    def total_params(self) -> int:
        """Exact parameter count computed from the architecture."""
        return round(self.embedding_params + self.layers * self.layer_params + self.final_params + self.head_params)

    @property
    def active_params(self) -> int:
        """Parameters used per token (differs from the total for mixture-of-experts models)."""
        inactive = (self.num_experts - self.experts_per_token) * self.expert_params * self.layers
        return round(self.total_params - inactive)

    @property
    def linear_shapes(self) -> dict[str, tuple[int, int]]:
        """(in, out) shape of each linear module of one block, by its usual HF name."""
        h, q, kv, i = self.hidden, self.q_dim, self.kv_dim, self.intermediate
        shapes = {"q_proj": (h, q), "k_proj": (h, kv), "v_proj": (h, kv), "o_proj": (q, h)}
        if self.mlp == "gated":
            shapes |= {"gate_proj": (h, i), "up_proj": (h, i), "down_proj": (i, h)}
        else:
            shapes |= {"up_proj": (h, i), "down_proj": (i, h)}
        return shapes

    @property
    def linear_params_per_layer(self) -> int:
        """Weights held by linear modules in one block (what 4-bit quantisation converts), experts included."""
        shapes = self.linear_shapes
        attention = sum(a * b for name, (a, b) in shapes.items() if name.endswith(("q_proj", "k_proj", "v_proj", "o_proj")))
        mlp = sum(a * b for name, (a, b) in shapes.items() if name in ("gate_proj", "up_proj", "down_proj"))
        return attention + self.num_experts * mlp


def _llama(id: str, name: str, layers: int, hidden: int, heads: int, kv: int, inter: int, vocab: int, *,
           tied: bool = False, family: str = "llama", head_dim: int | None = None, context: int = 4096,
           aliases: tuple[str, ...] = (), **extra: Any) -> ModelArch:
    """Build a Llama-style decoder entry (RMSNorm, SwiGLU, RoPE)."""
    return ModelArch(id=id, name=name, family=family, layers=layers, hidden=hidden, heads=heads, kv_heads=kv,
                     head_dim=head_dim or hidden // heads, intermediate=inter, vocab=vocab, tied_embeddings=tied,
                     max_context=context, aliases=aliases, **extra)


def _gpt2(id: str, name: str, layers: int, hidden: int, heads: int, aliases: tuple[str, ...]) -> ModelArch:
    """Build a GPT-2 entry (LayerNorm, GELU MLP 4h, learned positions, tied head, biases)."""
    return ModelArch(id=id, name=name, family="gpt2", layers=layers, hidden=hidden, heads=heads, kv_heads=heads,
                     head_dim=hidden // heads, intermediate=4 * hidden, vocab=50257, tied_embeddings=True, mlp="plain",
                     norm="layer", linear_bias=True, learned_positions=1024, dropout=0.1, max_context=1024,
                     aliases=aliases)


def _bert(id: str, name: str, layers: int, hidden: int, heads: int, aliases: tuple[str, ...]) -> ModelArch:
    """Build a BERT encoder entry (post-LN, GELU MLP 4h, 512 positions, 2 segments, pooler)."""
    return ModelArch(id=id, name=name, family="bert", layers=layers, hidden=hidden, heads=heads, kv_heads=heads,
                     head_dim=hidden // heads, intermediate=4 * hidden, vocab=30522, tied_embeddings=True, mlp="plain",
                     norm="layer", linear_bias=True, learned_positions=512, token_types=2, pooler=True,
                     embedding_norm=True, dropout=0.1, max_context=512, aliases=aliases)


LLAMA2_V, LLAMA3_V, QWEN_SMALL_V, QWEN_V, GEMMA_V = 32_000, 128_256, 151_936, 152_064, 256_000

REGISTRY: tuple[ModelArch, ...] = (
    _llama("llama-2-7b", "Llama 2 7B", 32, 4096, 32, 32, 11008, LLAMA2_V, aliases=("llama2-7b", "llama-7b")),
    _llama("llama-2-13b", "Llama 2 13B", 40, 5120, 40, 40, 13824, LLAMA2_V, aliases=("llama2-13b", "llama-13b")),
    _llama("llama-2-70b", "Llama 2 70B", 80, 8192, 64, 8, 28672, LLAMA2_V, aliases=("llama2-70b",)),
    _llama("llama-3-8b", "Llama 3 8B", 32, 4096, 32, 8, 14336, LLAMA3_V, context=8192, aliases=("llama3-8b",)),
    _llama("llama-3-70b", "Llama 3 70B", 80, 8192, 64, 8, 28672, LLAMA3_V, context=8192, aliases=("llama3-70b",)),
    _llama("llama-3.1-8b", "Llama 3.1 8B", 32, 4096, 32, 8, 14336, LLAMA3_V, context=131072),
    _llama("llama-3.1-70b", "Llama 3.1 70B", 80, 8192, 64, 8, 28672, LLAMA3_V, context=131072,
           aliases=("llama-3.3-70b",)),
    _llama("llama-3.1-405b", "Llama 3.1 405B", 126, 16384, 128, 8, 53248, LLAMA3_V, context=131072,
           aliases=("llama-3-405b", "llama-405b")),
    _llama("llama-3.2-1b", "Llama 3.2 1B", 16, 2048, 32, 8, 8192, LLAMA3_V, tied=True, context=131072),
    _llama("llama-3.2-3b", "Llama 3.2 3B", 28, 3072, 24, 8, 8192, LLAMA3_V, tied=True, context=131072),
    _llama("mistral-7b", "Mistral 7B", 32, 4096, 32, 8, 14336, LLAMA2_V, family="mistral", context=32768,
           aliases=("mistral-7b-v0.1", "mistral")),
    _llama("mixtral-8x7b", "Mixtral 8x7B", 32, 4096, 32, 8, 14336, LLAMA2_V, family="mixtral", context=32768,
           num_experts=8, experts_per_token=2, aliases=("mixtral", "mixtral-8x7b-v0.1")),
    _llama("qwen2.5-0.5b", "Qwen2.5 0.5B", 24, 896, 14, 2, 4864, QWEN_SMALL_V, tied=True, family="qwen2",
           qkv_bias=True, context=32768),
    _llama("qwen2.5-1.5b", "Qwen2.5 1.5B", 28, 1536, 12, 2, 8960, QWEN_SMALL_V, tied=True, family="qwen2",
           qkv_bias=True, context=32768),
    _llama("qwen2.5-3b", "Qwen2.5 3B", 36, 2048, 16, 2, 11008, QWEN_SMALL_V, tied=True, family="qwen2",
           qkv_bias=True, context=32768),
    _llama("qwen2.5-7b", "Qwen2.5 7B", 28, 3584, 28, 4, 18944, QWEN_V, family="qwen2", qkv_bias=True, context=131072),
    _llama("qwen2.5-14b", "Qwen2.5 14B", 48, 5120, 40, 8, 13824, QWEN_V, family="qwen2", qkv_bias=True,
           context=131072),
    _llama("qwen2.5-32b", "Qwen2.5 32B", 64, 5120, 40, 8, 27648, QWEN_V, family="qwen2", qkv_bias=True,
           context=131072),
    _llama("qwen2.5-72b", "Qwen2.5 72B", 80, 8192, 64, 8, 29568, QWEN_V, family="qwen2", qkv_bias=True,
           context=131072),
    _llama("gemma-2-2b", "Gemma 2 2B", 26, 2304, 8, 4, 9216, GEMMA_V, tied=True, family="gemma2", head_dim=256,
           norms_per_layer=4, context=8192, aliases=("gemma2-2b",)),
    _llama("gemma-2-9b", "Gemma 2 9B", 42, 3584, 16, 8, 14336, GEMMA_V, tied=True, family="gemma2", head_dim=256,
           norms_per_layer=4, context=8192, aliases=("gemma2-9b",)),
    _llama("gemma-2-27b", "Gemma 2 27B", 46, 4608, 32, 16, 36864, GEMMA_V, tied=True, family="gemma2", head_dim=128,
           norms_per_layer=4, context=8192, aliases=("gemma2-27b",)),
    _llama("phi-3-mini", "Phi-3 mini", 32, 3072, 32, 32, 8192, 32_064, family="phi3", context=4096,
           aliases=("phi-3-mini-4k", "phi3-mini", "phi-3-mini-4k-instruct", "phi3")),
    ModelArch(id="santacoder", name="SantaCoder 1.1B", family="gpt_bigcode", layers=24, hidden=2048, heads=16,
              kv_heads=1, head_dim=128, intermediate=8192, vocab=49280, tied_embeddings=True, mlp="plain",
              norm="layer", linear_bias=True, learned_positions=2048, max_context=2048,
              aliases=("bigcode/gpt_bigcode-santacoder", "gpt_bigcode-santacoder")),
    ModelArch(id="starcoder", name="StarCoder 15.5B", family="gpt_bigcode", layers=40, hidden=6144, heads=48,
              kv_heads=1, head_dim=128, intermediate=24576, vocab=49152, tied_embeddings=False, mlp="plain",
              norm="layer", linear_bias=True, learned_positions=8192, max_context=8192,
              aliases=("starcoderbase", "bigcode/starcoder", "starcoder-15b")),
    _gpt2("gpt2", "GPT-2 small", 12, 768, 12, aliases=("gpt2-small", "gpt-2", "gpt-2-small", "gpt2-124m")),
    _gpt2("gpt2-medium", "GPT-2 medium", 24, 1024, 16, aliases=("gpt-2-medium", "gpt2-355m")),
    _gpt2("gpt2-large", "GPT-2 large", 36, 1280, 20, aliases=("gpt-2-large", "gpt2-774m")),
    _gpt2("gpt2-xl", "GPT-2 XL", 48, 1600, 25, aliases=("gpt-2-xl", "gpt2-1.5b", "gpt-2-1.5b")),
    _bert("bert-base", "BERT base", 12, 768, 12, aliases=("bert-base-uncased", "bert-base-cased", "bert")),
    _bert("bert-large", "BERT large", 24, 1024, 16, aliases=("bert-large-uncased", "bert-large-cased")),
)

_NOISE_WORDS = ("instruct", "chat", "base", "hf", "it", "meta", "v0.1", "v0.2", "v0.3", "v01", "v1", "fp16",
                "bf16", "hf", "uncased", "cased")


def normalise_name(name: str) -> str:
    """Reduce a model name to a comparison key: no org prefix, no 'instruct'/'chat'/'hf', no separators."""
    text = name.strip().lower()
    text = text.rsplit("/", 1)[-1]
    text = re.sub(r"[\s_:]+", "-", text)
    parts = [p for p in text.split("-") if p]
    while parts and parts[0] == "meta":
        parts = parts[1:]
    kept = [p for p in parts if p not in _NOISE_WORDS]
    return re.sub(r"[^a-z0-9.]", "", "".join(kept or parts))


def _build_index() -> dict[str, ModelArch]:
    """Map every normalised id and alias to its registry entry."""
    index: dict[str, ModelArch] = {}
    for arch in REGISTRY:
        for key in (arch.id, arch.name, *arch.aliases):
            index.setdefault(normalise_name(key), arch)
    return index


_INDEX = _build_index()


def all_models() -> tuple[ModelArch, ...]:
    """Every model in the registry."""
    return REGISTRY


def name_index() -> dict[str, ModelArch]:
    """Normalised name key -> registry entry, for parsers that scan free text."""
    return dict(_INDEX)


def lookup(name: str) -> ModelArch | None:
    """Find a registry model by a forgiving name ('llama3 8b', 'meta-llama/Meta-Llama-3-8B'); None if unknown."""
    key = normalise_name(name)
    if not key:
        return None
    if key in _INDEX:
        return _INDEX[key]
    without_version_dot = key.replace(".0", "")
    return _INDEX.get(without_version_dot)


def resolve(name: str) -> ModelArch:
    """Like `lookup`, but raise ValueError naming close matches when the model is unknown."""
    arch = lookup(name)
    if arch is not None:
        return arch
    close = difflib.get_close_matches(normalise_name(name), list(_INDEX), n=3, cutoff=0.6)
    suggestions = sorted({_INDEX[c].id for c in close})
    hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else "; give --params-b or --config instead"
    raise ValueError(f"unknown model '{name}'{hint}")


_SIZE_IN_NAME = re.compile(r"(?<![a-z0-9.])(?:(\d+)x)?(\d+(?:\.\d+)?)\s*([bm])(?![a-z0-9])", re.IGNORECASE)


def size_from_name(name: str) -> float | None:
    """Billions of parameters written in a model name ('Qwen4-9B' -> 9, 'foo-8x7b' -> 56, 'bar-350m' -> 0.35;
    an active-parameter tag such as 'A3B' is skipped); None when the name states no size."""
    for match in _SIZE_IN_NAME.finditer(name.rsplit("/", 1)[-1]):
        experts, size, unit = match.groups()
        value = float(size) * (int(experts) if experts else 1) / (1000 if unit.lower() == "m" else 1)
        if value > 0:
            return value
    return None


GENERIC_VOCAB = LLAMA2_V
GENERIC_HIDDEN_PER_LAYER = 128
"""Llama-family aspect ratio: hidden width is about 128 x the number of layers (7B: 4096/32, 13B: 5120/40)."""


def _generic_params(hidden: float) -> float:
    """Parameters of the generic decoder with a given (real-valued) hidden width."""
    layers = hidden / GENERIC_HIDDEN_PER_LAYER
    per_layer = 2.5 * hidden**2 + 3 * hidden * (8 * hidden / 3) + 2 * hidden  # GQA 4:1 attention, SwiGLU 8h/3, norms
    return 2 * GENERIC_VOCAB * hidden + layers * per_layer + hidden


def generic_decoder(params_b: float) -> ModelArch:
    """A standard Llama-style decoder scaled smoothly to exactly `params_b` billion parameters, flagged approximate.

    Dimensions are real numbers, not rounded to layer or head counts, so that every memory term grows with the
    size: a bigger model never gets a smaller estimate.
    """
    if not (isinstance(params_b, (int, float)) and math.isfinite(params_b) and params_b > 0):
        raise ValueError(f"model size must be a positive number of billions, got {params_b}")
    target = params_b * 1e9
    low, high = 1e-3, 1e6
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if _generic_params(mid) < target else (low, mid)
    hidden = (low + high) / 2
    heads = hidden / 128
    return ModelArch(id=f"generic-{params_b:g}b", name=f"generic {params_b:g}B decoder", family="generic",
                     layers=hidden / GENERIC_HIDDEN_PER_LAYER, hidden=hidden, heads=heads,  # type: ignore[arg-type]
                     kv_heads=heads / 4, head_dim=128, intermediate=8 * hidden / 3,  # type: ignore[arg-type]
                     vocab=GENERIC_VOCAB, tied_embeddings=False, max_context=8192, approximate=True)


def _require_int(config: dict[str, Any], *keys: str, default: int | None = None) -> int:
    """First present key of `keys` as a positive int, else `default`, else a ValueError naming the keys."""
    for key in keys:
        value = config.get(key)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0 or int(value) != value:
                raise ValueError(f"config.json: '{key}' must be a positive integer, got {value!r}")
            return int(value)
    if default is not None:
        return default
    raise ValueError(f"config.json: missing '{keys[0]}'")


def from_hf_config(config: dict[str, Any], *, name: str = "custom") -> ModelArch:
    """Read a HuggingFace config.json dict (Llama, Mistral, Mixtral, Qwen2, Gemma/Gemma2, Phi-3, GPT-2, BERT...)."""
    if not isinstance(config, dict):
        raise ValueError("config.json: expected a JSON object")
    model_type = str(config.get("model_type", "")).lower()
    if model_type == "gpt2":
        layers, hidden = _require_int(config, "n_layer"), _require_int(config, "n_embd")
        heads = _require_int(config, "n_head")
        arch = _gpt2(f"{name}", name, layers, hidden, heads, ())
        return replace(arch, vocab=_require_int(config, "vocab_size", default=50257),
                       learned_positions=_require_int(config, "n_positions", default=1024),
                       intermediate=_require_int(config, "n_inner", default=4 * hidden))
    if model_type == "bert":
        arch = _bert(name, name, _require_int(config, "num_hidden_layers"), _require_int(config, "hidden_size"),
                     _require_int(config, "num_attention_heads"), ())
        return replace(arch, vocab=_require_int(config, "vocab_size"),
                       intermediate=_require_int(config, "intermediate_size"),
                       learned_positions=_require_int(config, "max_position_embeddings", default=512),
                       token_types=_require_int(config, "type_vocab_size", default=2))
    hidden = _require_int(config, "hidden_size", "d_model", "n_embd")
    layers = _require_int(config, "num_hidden_layers", "n_layer", "num_layers")
    heads = _require_int(config, "num_attention_heads", "n_head")
    kv = _require_int(config, "num_key_value_heads", default=heads)
    if heads % kv:
        raise ValueError(f"config.json: {heads} attention heads are not a multiple of {kv} key/value heads")
    head_dim = _require_int(config, "head_dim", default=hidden // heads)
    intermediate = _require_int(config, "intermediate_size", "ffn_dim", default=4 * hidden)
    vocab = _require_int(config, "vocab_size")
    experts = _require_int(config, "num_local_experts", "num_experts", default=1)
    top_k = _require_int(config, "num_experts_per_tok", default=min(2, experts))
    family = model_type or "generic"
    tied = bool(config.get("tie_word_embeddings", family in ("gemma", "gemma2")))
    return ModelArch(id=name, name=name, family=family, layers=layers, hidden=hidden, heads=heads, kv_heads=kv,
                     head_dim=head_dim, intermediate=intermediate, vocab=vocab, tied_embeddings=tied,
                     qkv_bias=bool(config.get("attention_bias", family == "qwen2")),
                     norms_per_layer=4 if family == "gemma2" else 2, num_experts=experts,
                     experts_per_token=top_k if experts > 1 else 1,
                     max_context=_require_int(config, "max_position_embeddings", default=4096))


def load_hf_config(path: str | Path) -> ModelArch:
    """Read a config.json file from disk (or a folder holding one) into a ModelArch."""
    file = Path(path)
    if file.is_dir():
        file = file / "config.json"
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as error:
        raise ValueError(f"cannot read config file '{file}': {error.strerror or error}") from None
    try:
        config = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"config file '{file}' is not valid JSON (line {error.lineno}: {error.msg})") from None
    return from_hf_config(config, name=file.parent.name or file.stem)
