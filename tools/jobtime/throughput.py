"""Training FLOPs per token and achievable GPU throughput: the compute side of job time, with every assumption sourced.

FLOPs per trained token (PaLM, Chowdhery et al. 2022, appendix B; also mosaicml/llm-foundry benchmarking README):
forward 2·N + 4·L·H·T (N = matmul parameters, L layers, H = heads × head_dim, T = sequence length), backward
twice the forward. Full training: 6·N + 12·L·H·T. LoRA/QLoRA freeze the base, so its weight-gradient matmuls are
skipped: forward 2·N plus activation gradients 2·N (4·N), attention still 12·L·H·T, plus 6 × adapter parameters.
Gradient checkpointing recomputes the forward once: + 2·N + 4·L·H·T. MoE models count only active parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

from tools.gpus import GpuSpec
from tools.models import ModelArch

FLOPS_SOURCE = "PaLM (Chowdhery et al. 2022) appendix B: 6N + 12·L·H·T per token; llm-foundry benchmarking README"
MAMF_FRACTION = {
    "B200": 0.776,
    "B300": 0.786,
    "GB200": 0.729,
    "MI300X": 0.514,
    "GH200": 0.838,
    "H100": 0.803,
    "H200": 0.803,
}
"""Measured max-achievable matmul as a fraction of dense peak (hardware.md §1 notes, [ME-acc])."""
QLORA_DEQUANT_BYTES_PER_PARAM = 2.5
"""Read 0.5 byte of NF4 and write 2 bytes of BF16 for every base weight, each time a matmul needs it."""


@dataclass(frozen=True, kw_only=True)
class Utilisation:
    """Fraction of dense peak TFLOPS a training run reaches on a GPU, and where the figure comes from."""

    value: float
    source: str


def matmul_params(arch: ModelArch) -> int:
    """Parameters used in matmuls per token: active parameters without the embedding lookup, plus a tied head."""
    tied_head = arch.vocab * arch.hidden if arch.tied_embeddings and arch.family != "bert" else 0
    return max(arch.active_params - arch.embedding_params + tied_head, 1)


@dataclass(frozen=True, kw_only=True)
class TokenFlops:
    """Training FLOPs for one token, split by where they come from."""

    total: float
    dense: float
    attention: float
    recompute: float
    adapters: float


def flops_per_token(
    arch: ModelArch, *, method: str, seq_len: int, gradient_checkpointing: bool, trainable_params: int
) -> TokenFlops:
    """Training FLOPs per token for the method (full, LoRA/QLoRA) with or without activation recompute."""
    n = matmul_params(arch)
    attention_forward = 4.0 * arch.layers * arch.q_dim * seq_len
    adapters = method in ("lora", "qlora")
    dense = (4.0 if adapters else 6.0) * n
    attention = 3.0 * attention_forward
    adapter_flops = 6.0 * trainable_params if adapters else 0.0
    recompute = (2.0 * n + attention_forward) if gradient_checkpointing else 0.0
    return TokenFlops(
        total=dense + attention + adapter_flops + recompute,
        dense=dense,
        attention=attention,
        recompute=recompute,
        adapters=adapter_flops,
    )


def backward_fraction(method: str, gradient_checkpointing: bool) -> float:
    """Share of a step's compute spent in the backward pass (the window gradient communication can hide in)."""
    forward, backward = (2.0, 2.0) if method in ("lora", "qlora") else (2.0, 4.0)
    if gradient_checkpointing:
        backward += 2.0
    return backward / (forward + backward)


def qlora_dequant_seconds(quantized_params: int, gpu: GpuSpec, *, gradient_checkpointing: bool) -> float:
    """Seconds per micro-step a QLoRA GPU spends dequantizing NF4 weights to BF16 (memory-bound, at spec bandwidth).

    Weights are dequantized for each matmul that needs them: forward, backward (input gradients) and the recompute
    forward when checkpointing (Dettmers et al. 2023, QLoRA §3). Consistent with the QLoRA author's "roughly on par
    with 16-bit LoRA" (artidoro/qlora#107) for typical batch sizes.
    """
    if not gpu.memory_bandwidth_tbs:
        return 0.0
    passes = 3 if gradient_checkpointing else 2
    return passes * quantized_params * QLORA_DEQUANT_BYTES_PER_PARAM / (gpu.memory_bandwidth_tbs * 1e12)


def peak_tflops(gpu: GpuSpec, precision: str) -> float | None:
    """Dense tensor TFLOPS for the training precision: BF16, or FP16 on GPUs without BF16; None for FP32 or unknown."""
    if precision == "fp32":
        return None
    if precision in ("amp_fp16", "fp16"):
        return gpu.fp16_tflops or gpu.bf16_tflops
    return gpu.training_tflops()
