"""The shape of a transformer (dense, mixture-of-experts, multi-head latent attention): enough to count its
parameters exactly and to size its activations."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

from tools.frozen import hash_once

Mlp = Literal["gated", "plain"]
Norm = Literal["rms", "layer"]
ATTENTION_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "q_a_proj")
MLP_MODULES = ("gate_proj", "up_proj", "down_proj")


@dataclass(frozen=True, kw_only=True)
class ModelArch:
    """Shape of a transformer, enough to count its parameters and size its activations. The derived counts are
    computed once per shape (cached_property: the fields are frozen; the memory model reads them per layout)."""

    id: str
    """Registry id, e.g. 'llama-3.1-8b'."""
    name: str
    """Display name, e.g. 'Llama 3.1 8B'."""
    family: str
    """Architecture family: llama, mistral, mixtral, qwen2, qwen3, gemma2, phi3, deepseek_v3, gpt2, bert, generic..."""
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    """Query/key width per head (for multi-head latent attention: the no-RoPE plus the RoPE part)."""
    intermediate: int
    """Width of a dense MLP (dense models, and the dense layers of a mixture-of-experts model)."""
    vocab: int
    tied_embeddings: bool
    mlp: Mlp = "gated"
    """'gated' = SwiGLU/GeGLU with gate, up and down matrices; 'plain' = fc1/fc2 with GELU."""
    norm: Norm = "rms"
    norms_per_layer: int = 2
    qkv_bias: bool = False
    """Bias on q/k/v projections only (Qwen2)."""
    linear_bias: bool = False
    """Bias on every linear layer (GPT-2, BERT, OPT, gpt-oss)."""
    qk_norm: bool = False
    """RMSNorm on queries and keys per head (Qwen3, Gemma 3)."""
    num_experts: int = 1
    experts_per_token: int = 1
    moe_intermediate: int = 0
    """Width of one routed expert when it differs from `intermediate` (0: the same)."""
    shared_experts: int = 0
    """Experts every token goes through, each as wide as a routed expert (DeepSeek, Llama 4)."""
    dense_layers: int = 0
    """Layers of a mixture-of-experts model that have a dense MLP instead (DeepSeek's first k, Llama 4 Maverick's
    interleaved ones)."""
    router_bias: bool = False
    q_lora_rank: int = 0
    """Multi-head latent attention (DeepSeek V2/V3): rank of the query compression (0: a full q projection)."""
    kv_lora_rank: int = 0
    """Multi-head latent attention: rank of the joint key/value compression (0: ordinary attention)."""
    rope_head_dim: int = 0
    v_head_dim: int = 0
    learned_positions: int = 0
    """Learned absolute position embeddings (GPT-2, BERT, OPT); 0 for RoPE models."""
    token_types: int = 0
    """BERT segment embeddings."""
    pooler: bool = False
    """BERT pooler (dense h x h with bias)."""
    embedding_norm: bool = False
    """LayerNorm right after the embeddings (BERT)."""
    embedding_projection: int = 0
    """Width of a projected word embedding (OPT-350m: 512 -> hidden in and hidden -> 512 out); 0: none."""
    final_norm: bool = True
    """A norm after the last block (OPT-350m, a post-LN model, has none)."""
    dropout: float = 0.0
    """Dropout probability used in training by the reference config."""
    max_context: int = 4096
    approximate: bool = False
    """True when the shape is a standard decoder scaled to a size, not the real model."""
    aliases: tuple[str, ...] = field(default=())
    hf_repo: str = ""
    """Hugging Face repository whose config.json the shape was read from (the source of the numbers)."""

    def __hash__(self) -> int:
        """The fields' hash, computed once (shapes key the memory model's caches)."""
        return hash_once(self)

    @cached_property
    def q_dim(self) -> int:
        """Width of the query projection output."""
        return self.heads * self.head_dim

    @cached_property
    def kv_dim(self) -> int:
        """Width of each of the key and value projection outputs."""
        return self.kv_heads * self.head_dim

    @cached_property
    def latent(self) -> bool:
        """True for multi-head latent attention."""
        return self.kv_lora_rank > 0

    @cached_property
    def norm_params(self) -> int:
        """Parameters of one norm layer (LayerNorm has a bias)."""
        return self.hidden * (2 if self.norm == "layer" else 1)

    @property
    def attention_shapes(self) -> dict[str, tuple[int, int]]:
        """(in, out) of each attention linear by its usual HF name (latent attention: q_a/q_proj = q_b,
        k_proj = kv_a_proj_with_mqa, v_proj = kv_b_proj)."""
        h, q, kv = self.hidden, self.q_dim, self.kv_dim
        if not self.latent:
            return {"q_proj": (h, q), "k_proj": (h, kv), "v_proj": (h, kv), "o_proj": (q, h)}
        nope, v = self.head_dim - self.rope_head_dim, self.v_head_dim
        shapes = {
            "q_proj": (self.q_lora_rank or h, q),
            "k_proj": (h, self.kv_lora_rank + self.rope_head_dim),
            "v_proj": (self.kv_lora_rank, self.heads * (nope + v)),
            "o_proj": (self.heads * v, h),
        }
        if self.q_lora_rank:
            shapes["q_a_proj"] = (h, self.q_lora_rank)
        return shapes

    @cached_property
    def attention_params(self) -> int:
        """Parameters of one attention block (projections, their biases, q/k and latent norms)."""
        weights = sum(a * b for a, b in self.attention_shapes.values())
        q, kv, h = self.q_dim, self.kv_dim, self.hidden
        if self.linear_bias:
            weights += q + 2 * kv + h
        elif self.qkv_bias:
            weights += q + 2 * kv
        if self.qk_norm:
            weights += 2 * self.head_dim
        return weights + self.q_lora_rank + self.kv_lora_rank

    @cached_property
    def expert_width(self) -> int:
        """Width of one routed expert (the dense width for dense models)."""
        return self.moe_intermediate or self.intermediate

    def mlp_params_of(self, width: int) -> int:
        """Parameters of one MLP of a given width."""
        h = self.hidden
        if self.mlp == "gated":
            return 3 * h * width + (2 * width + h if self.linear_bias else 0)
        return 2 * h * width + (width + h if self.linear_bias else 0)

    @cached_property
    def expert_params(self) -> int:
        """Parameters of one routed expert (of the MLP for dense models)."""
        return self.mlp_params_of(self.expert_width)

    @cached_property
    def moe_layers(self) -> int:
        """Layers with routed experts."""
        return self.layers - self.dense_layers if self.num_experts > 1 else 0

    @cached_property
    def router_params(self) -> int:
        """Parameters of the router of one mixture-of-experts layer (0 for dense models)."""
        if self.num_experts <= 1:
            return 0
        return self.hidden * self.num_experts + (self.num_experts if self.router_bias else 0)

    @cached_property
    def moe_mlp_params(self) -> int:
        """MLP parameters of one mixture-of-experts layer: routed and shared experts and the router."""
        return (self.num_experts + self.shared_experts) * self.expert_params + self.router_params

    @cached_property
    def mlp_params_total(self) -> int:
        """MLP parameters of all layers."""
        dense = (self.layers - self.moe_layers) * self.mlp_params_of(self.intermediate)
        return dense + self.moe_layers * self.moe_mlp_params

    @cached_property
    def layer_params(self) -> float:
        """Parameters of one transformer block, averaged over the blocks (they differ in some MoE models)."""
        return self.attention_params + self.norms_per_layer * self.norm_params + self.mlp_params_total / self.layers

    @cached_property
    def max_layer_params(self) -> int:
        """Parameters of the largest transformer block (the unit FSDP/ZeRO-3 gathers)."""
        mlp = self.moe_mlp_params if self.moe_layers else self.mlp_params_of(self.intermediate)
        if self.moe_layers and self.dense_layers:
            mlp = max(mlp, self.mlp_params_of(self.intermediate))
        return self.attention_params + self.norms_per_layer * self.norm_params + mlp

    @cached_property
    def embedding_params(self) -> int:
        """Input embedding parameters (tokens, positions, segments, projection, embedding norm)."""
        h, width = self.hidden, self.embedding_projection or self.hidden
        extra = (self.learned_positions + self.token_types) * h + (2 * width * h if self.embedding_projection else 0)
        return self.vocab * width + extra + (self.norm_params if self.embedding_norm else 0)

    @cached_property
    def head_params(self) -> int:
        """Output head parameters not shared with the input embedding (0 when tied or encoder-only)."""
        return 0 if self.tied_embeddings else self.vocab * self.hidden

    @cached_property
    def final_params(self) -> int:
        """Parameters after the last block: final norm and BERT pooler."""
        if self.family == "bert":
            return self.hidden * self.hidden + self.hidden if self.pooler else 0
        return self.norm_params if self.final_norm else 0

    @cached_property
    def total_params(self) -> int:
        """Exact parameter count computed from the architecture (memory is sized by it)."""
        return round(self.embedding_params + self.layers * self.layer_params + self.final_params + self.head_params)

    @cached_property
    def active_params(self) -> int:
        """Parameters used per token (compute is sized by it; less than the total for mixture-of-experts models)."""
        inactive = (self.num_experts - self.experts_per_token) * self.expert_params * self.moe_layers
        return round(self.total_params - inactive)

    @cached_property
    def active_mlp_width(self) -> int:
        """MLP width one token goes through (routed experts it picks plus shared ones)."""
        if self.num_experts <= 1:
            return self.intermediate
        return (self.experts_per_token + self.shared_experts) * self.expert_width

    @property
    def linear_shapes(self) -> dict[str, tuple[int, int]]:
        """(in, out) shape of each linear module of one block, by its usual HF name (MLP: one expert)."""
        h, i = self.hidden, self.expert_width
        shapes = dict(self.attention_shapes)
        if self.mlp == "gated":
            shapes |= {"gate_proj": (h, i), "up_proj": (h, i), "down_proj": (i, h)}
        else:
            shapes |= {"up_proj": (h, i), "down_proj": (i, h)}
        return shapes

    @cached_property
    def largest_linear_params(self) -> int:
        """Weights of the largest linear module of one block (of one expert's, in a mixture of experts)."""
        return max(a * b for a, b in self.linear_shapes.values())

    @cached_property
    def mlp_copies(self) -> float:
        """Expert-width MLP copies per block, averaged (routed + shared experts; a dense layer counts by width)."""
        moe = self.moe_layers * (self.num_experts + self.shared_experts)
        dense = (self.layers - self.moe_layers) * self.intermediate / self.expert_width
        return (moe + dense) / self.layers

    @cached_property
    def linear_params_per_layer(self) -> float:
        """Weights held by linear modules in one block, averaged (what 4-bit quantisation converts)."""
        shapes = self.linear_shapes
        attention = sum(a * b for name, (a, b) in shapes.items() if name in ATTENTION_MODULES)
        mlp = sum(a * b for name, (a, b) in shapes.items() if name in MLP_MODULES)
        return attention + self.mlp_copies * mlp

    @cached_property
    def max_layer_linear_params(self) -> float:
        """Linear weights of the largest block."""
        return self.linear_params_per_layer * self.max_layer_params / max(self.layer_params, 1)
