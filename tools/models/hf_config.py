"""Read a Hugging Face config.json into a ModelArch: the families whose shape the estimator knows are read key by
key; any other model_type is refused with a clear message instead of being modelled as a Llama."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tools.models.arch import ModelArch

LLAMA_LIKE = (
    "llama",
    "mistral",
    "mixtral",
    "qwen2",
    "qwen3",
    "qwen3_moe",
    "gemma",
    "gemma2",
    "gemma3",
    "gemma3_text",
    "phi3",
    "llama4",
    "llama4_text",
    "deepseek_v2",
    "deepseek_v3",
    "gpt_oss",
    "granite",
)
"""RMSNorm decoders with gated MLPs (SwiGLU/GeGLU), dense or mixture-of-experts, read by `_decoder`."""
OTHER_FAMILIES = ("gpt2", "gpt_bigcode", "bert", "opt", "falcon", "gpt_neox")
TIED_BY_DEFAULT = ("gemma", "gemma2", "gemma3", "gemma3_text", "opt", "falcon", "gpt2", "gpt_bigcode", "bert")


def _int(config: dict[str, Any], *keys: str, default: int | None = None) -> int:
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


def _tied(config: dict[str, Any], family: str) -> bool:
    """Whether the output head shares the input embedding (each family's config class default when unstated)."""
    return bool(config.get("tie_word_embeddings", family in TIED_BY_DEFAULT))


def _plain(
    name: str, family: str, layers: int, hidden: int, heads: int, kv: int, inter: int, vocab: int, **extra: Any
) -> ModelArch:
    """A LayerNorm decoder with a two-matrix GELU/ReLU MLP and biases (GPT-2, OPT, Falcon, GPT-NeoX...)."""
    values: dict[str, Any] = {"mlp": "plain", "norm": "layer", "linear_bias": True} | extra
    return ModelArch(
        id=name,
        name=name,
        family=family,
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv,
        head_dim=hidden // heads,
        intermediate=inter,
        vocab=vocab,
        **values,
    )


def _gpt2(config: dict[str, Any], name: str, family: str) -> ModelArch:
    """GPT-2 and GPT-BigCode (multi-query): learned positions, tied head."""
    hidden, heads = _int(config, "n_embd"), _int(config, "n_head")
    kv = 1 if family == "gpt_bigcode" and config.get("multi_query", True) else heads
    return _plain(
        name,
        family,
        _int(config, "n_layer"),
        hidden,
        heads,
        kv,
        _int(config, "n_inner", default=4 * hidden),
        _int(config, "vocab_size", default=50257),
        tied_embeddings=_tied(config, family),
        learned_positions=_int(config, "n_positions", default=1024),
        max_context=_int(config, "n_positions", default=1024),
    )


def _bert(config: dict[str, Any], name: str) -> ModelArch:
    """BERT encoder: post-LN, GELU MLP, positions, segments, pooler."""
    hidden, heads = _int(config, "hidden_size"), _int(config, "num_attention_heads")
    return _plain(
        name,
        "bert",
        _int(config, "num_hidden_layers"),
        hidden,
        heads,
        heads,
        _int(config, "intermediate_size"),
        _int(config, "vocab_size"),
        tied_embeddings=True,
        learned_positions=_int(config, "max_position_embeddings", default=512),
        token_types=_int(config, "type_vocab_size", default=2),
        pooler=True,
        embedding_norm=True,
        dropout=0.1,
        max_context=_int(config, "max_position_embeddings", default=512),
    )


def _opt(config: dict[str, Any], name: str) -> ModelArch:
    """OPT: ReLU fc1/fc2 MLP, learned positions offset by 2, optional projected embedding, tied head."""
    hidden, heads = _int(config, "hidden_size"), _int(config, "num_attention_heads")
    positions = _int(config, "max_position_embeddings", default=2048)
    projection = _int(config, "word_embed_proj_dim", default=hidden)
    pre_norm = bool(config.get("do_layer_norm_before", True))
    return _plain(
        name,
        "opt",
        _int(config, "num_hidden_layers"),
        hidden,
        heads,
        heads,
        _int(config, "ffn_dim", default=4 * hidden),
        _int(config, "vocab_size"),
        tied_embeddings=_tied(config, "opt"),
        learned_positions=positions + 2,
        embedding_projection=projection if projection != hidden else 0,
        final_norm=pre_norm and not config.get("_remove_final_layer_norm", False),
        linear_bias=bool(config.get("enable_bias", True)),
        dropout=float(config.get("dropout", 0.1) or 0),
        max_context=positions,
    )


def _falcon(config: dict[str, Any], name: str) -> ModelArch:
    """Falcon: multi-query or grouped attention, parallel attention/MLP with one or two LayerNorms, rotary."""
    hidden, heads = _int(config, "hidden_size"), _int(config, "num_attention_heads")
    new = bool(config.get("new_decoder_architecture", False))
    kv = _int(config, "num_kv_heads", default=heads) if new else (1 if config.get("multi_query", True) else heads)
    parallel = bool(config.get("parallel_attn", True))
    norms = _int(config, "num_ln_in_parallel_attn", default=2) if new else (1 if parallel else 2)
    return _plain(
        name,
        "falcon",
        _int(config, "num_hidden_layers"),
        hidden,
        heads,
        kv,
        _int(config, "ffn_hidden_size", default=4 * hidden),
        _int(config, "vocab_size"),
        tied_embeddings=_tied(config, "falcon"),
        linear_bias=bool(config.get("bias", False)),
        norms_per_layer=norms,
        max_context=_int(config, "max_position_embeddings", default=2048),
    )


def _gpt_neox(config: dict[str, Any], name: str) -> ModelArch:
    """GPT-NeoX / Pythia: LayerNorm, GELU MLP, biases, rotary, untied head."""
    hidden, heads = _int(config, "hidden_size"), _int(config, "num_attention_heads")
    return _plain(
        name,
        "gpt_neox",
        _int(config, "num_hidden_layers"),
        hidden,
        heads,
        heads,
        _int(config, "intermediate_size", default=4 * hidden),
        _int(config, "vocab_size"),
        tied_embeddings=_tied(config, "gpt_neox"),
        linear_bias=bool(config.get("attention_bias", True)),
        max_context=_int(config, "max_position_embeddings", default=2048),
    )


def _experts(config: dict[str, Any], family: str, layers: int) -> dict[str, Any]:
    """Mixture-of-experts fields: routed experts, top-k, expert width, shared experts, dense layers."""
    experts = _int(config, "num_local_experts", "num_experts", "n_routed_experts", default=1)
    if experts <= 1:
        return {}
    dense = 0
    if family.startswith("deepseek"):
        dense = _int(config, "first_k_dense_replace", default=0) if config.get("first_k_dense_replace") else 0
    elif family.startswith("llama4"):
        step = _int(config, "interleave_moe_layer_step", default=1)
        dense = layers - layers // step
    elif family == "qwen3_moe":
        dense = len(config.get("mlp_only_layers") or [])
    shared = (
        _int(config, "n_shared_experts", default=1 if family.startswith("llama4") else 0)
        if family.startswith(("deepseek", "llama4"))
        else 0
    )
    return {
        "num_experts": experts,
        "experts_per_token": _int(config, "num_experts_per_tok", "experts_per_token", default=min(2, experts)),
        "moe_intermediate": _int(config, "moe_intermediate_size", default=0)
        if "moe_intermediate_size" in config
        else 0,
        "shared_experts": shared,
        "dense_layers": dense,
        "router_bias": family == "gpt_oss" or config.get("topk_method") == "noaux_tc",
    }


def _decoder(config: dict[str, Any], name: str, family: str) -> ModelArch:
    """RMSNorm decoders with gated MLPs: Llama, Mistral/Mixtral, Qwen2/3 (+MoE), Gemma 1-3, Phi-3/4, Llama 4,
    DeepSeek V2/V3 (latent attention), gpt-oss, Granite."""
    hidden = _int(config, "hidden_size")
    layers = _int(config, "num_hidden_layers")
    heads = _int(config, "num_attention_heads")
    latent: dict[str, Any] = {}
    if family.startswith("deepseek") and config.get("kv_lora_rank"):
        rope = _int(config, "qk_rope_head_dim")
        latent = {
            "kv_lora_rank": _int(config, "kv_lora_rank"),
            "rope_head_dim": rope,
            "v_head_dim": _int(config, "v_head_dim"),
            "q_lora_rank": _int(config, "q_lora_rank", default=0) if config.get("q_lora_rank") else 0,
        }
        kv, head_dim = heads, _int(config, "qk_nope_head_dim") + rope
    else:
        kv = _int(config, "num_key_value_heads", default=heads)
        if heads % kv:
            raise ValueError(f"config.json: {heads} attention heads are not a multiple of {kv} key/value heads")
        head_dim = _int(config, "head_dim", default=hidden // heads)
    moe = _experts(config, family, layers)
    if family.startswith("llama4"):
        inter = _int(config, "intermediate_size_mlp", "intermediate_size")
        moe["moe_intermediate"] = _int(config, "intermediate_size") if moe else 0
    else:
        inter = _int(config, "intermediate_size", default=4 * hidden)
    return ModelArch(
        id=name,
        name=name,
        family=family,
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv,
        head_dim=head_dim,
        intermediate=inter,
        vocab=_int(config, "vocab_size"),
        tied_embeddings=_tied(config, family),
        qkv_bias=bool(config.get("attention_bias", family == "qwen2")) and family != "gpt_oss",
        linear_bias=family == "gpt_oss",
        qk_norm=family in ("qwen3", "qwen3_moe", "gemma3", "gemma3_text"),
        norms_per_layer=4 if family in ("gemma2", "gemma3", "gemma3_text") else 2,
        max_context=_int(config, "max_position_embeddings", default=4096),
        **moe,
        **latent,
    )


def from_hf_config(config: dict[str, Any], *, name: str = "custom") -> ModelArch:
    """Read a Hugging Face config.json dict; refuse a model_type whose shape the estimator does not know."""
    if not isinstance(config, dict):
        raise ValueError("config.json: expected a JSON object")
    family = str(config.get("model_type", "")).lower()
    if isinstance(config.get("text_config"), dict) and family in ("gemma3", "llama4", "mistral3"):
        inner = config["text_config"]
        config, family = inner, str(inner.get("model_type", family)).lower()
    readers = {
        "gpt2": lambda: _gpt2(config, name, "gpt2"),
        "gpt_bigcode": lambda: _gpt2(config, name, "gpt_bigcode"),
        "bert": lambda: _bert(config, name),
        "opt": lambda: _opt(config, name),
        "falcon": lambda: _falcon(config, name),
        "gpt_neox": lambda: _gpt_neox(config, name),
    }
    if family in readers:
        return readers[family]()
    if family in LLAMA_LIKE:
        return _decoder(config, name, family)
    known = ", ".join(sorted(LLAMA_LIKE + OTHER_FAMILIES))
    what = f"model_type '{family}' is not one the estimator can read" if family else "it has no model_type"
    raise ValueError(f"config.json: {what} (it reads {known}); give --params-b for an approximate estimate")


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
