"""The plan of evals/measure_gpu.py: the model shapes, the configurations it measures and the output columns
(standard library only, so the plan prints where torch is not installed)."""

from __future__ import annotations

import os
from dataclasses import dataclass

COLUMNS = [
    "id",
    "split",
    "model",
    "params_b",
    "method",
    "precision",
    "optimizer",
    "optimizer_impl",
    "micro_batch_size",
    "seq_len",
    "gradient_checkpointing",
    "flash_attention",
    "lora_rank",
    "lora_targets",
    "num_gpus",
    "sharding",
    "offload",
    "metric",
    "measured_gib",
    "source",
    "notes",
]

GIB = 1024**3
STEPS = 3
LORA_RANK = 16
LORA_ALPHA = 32
QV_TARGETS = ["q_proj", "v_proj"]
ALL_LINEAR = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]

# Llama-style shapes (memory-formulas.md section 4). rope settings do not affect memory and are left at
# LlamaConfig defaults except rope_theta; max_position_embeddings only needs to cover 4096.
MODELS = {
    "llama3.2-1b": dict(
        name="meta-llama/Llama-3.2-1B",
        hidden_size=2048,
        intermediate_size=8192,
        num_hidden_layers=16,
        num_attention_heads=32,
        num_key_value_heads=8,
        head_dim=64,
        vocab_size=128256,
        tie_word_embeddings=True,
    ),
    "llama3.2-3b": dict(
        name="meta-llama/Llama-3.2-3B",
        hidden_size=3072,
        intermediate_size=8192,
        num_hidden_layers=28,
        num_attention_heads=24,
        num_key_value_heads=8,
        head_dim=128,
        vocab_size=128256,
        tie_word_embeddings=True,
    ),
    "llama3.1-8b": dict(
        name="meta-llama/Llama-3.1-8B",
        hidden_size=4096,
        intermediate_size=14336,
        num_hidden_layers=32,
        num_attention_heads=32,
        num_key_value_heads=8,
        head_dim=128,
        vocab_size=128256,
        tie_word_embeddings=False,
    ),
}


def expected_params(key: str) -> int:
    """Parameter count from the shapes (Llama: SwiGLU MLP, GQA, 2 RMSNorms/layer, final norm)."""
    m = MODELS[key]
    h, i, L, v = m["hidden_size"], m["intermediate_size"], m["num_hidden_layers"], m["vocab_size"]
    q = m["num_attention_heads"] * m["head_dim"]
    kv = m["num_key_value_heads"] * m["head_dim"]
    per_layer = h * q + 2 * h * kv + q * h + 3 * h * i + 2 * h
    emb = v * h * (1 if m["tie_word_embeddings"] else 2)
    return L * per_layer + emb + h


@dataclass(frozen=True)
class Plan:
    model: str  # key of MODELS
    method: str  # full_finetune | lora
    precision: str  # bf16 | amp_bf16
    targets: str  # "" | "q_proj,v_proj" | "all-linear"
    mbs: int
    seq: int
    gc: bool
    impl: str = "fused"  # AdamW: fused (HF Trainer default) | foreach (torch.optim.AdamW's default on CUDA)

    @property
    def group(self) -> tuple:
        return (self.model, self.method, self.precision, self.targets)

    @property
    def slug(self) -> str:
        t = {"": "", "q_proj,v_proj": "-qv", "all-linear": "-alllin"}[self.targets]
        meth = "full" if self.method == "full_finetune" else f"lora{LORA_RANK}"
        return (
            f"h200-{self.model}-{meth}{t}-{self.precision}-mb{self.mbs}-s{self.seq}"
            f"-gc{'on' if self.gc else 'off'}" + ("" if self.impl == "fused" else f"-{self.impl}")
        )


def build_plan() -> list[Plan]:
    """Ordered small to large so that a time-out still leaves the cheap rows done.
    Rows within a group share one model build."""
    P = []

    def add(model, method, precision, targets, cells):
        for cell in cells:
            P.append(Plan(model, method, precision, targets, *cell))

    # --- Llama 3.2 1B: the full sweeps (cheap) ---
    add(
        "llama3.2-1b",
        "full_finetune",
        "bf16",
        "",
        [
            (1, 512, False),
            (1, 2048, False),
            (1, 4096, False),
            (2, 2048, False),
            (4, 2048, False),
            (1, 2048, True),
            (4, 2048, True),
            (4, 4096, True),
        ],
    )
    add(
        "llama3.2-1b",
        "full_finetune",
        "amp_bf16",
        "",
        [
            (1, 2048, False),
            (4, 2048, False),
            (4, 2048, True),
            # issue 10: the same job with torch's foreach AdamW (one state-sized temporary) and at the 4090 size
            (1, 1024, True),
            (1, 1024, True, "foreach"),
            (4, 2048, True, "foreach"),
        ],
    )
    add(
        "llama3.2-1b",
        "lora",
        "bf16",
        "q_proj,v_proj",
        [
            (1, 2048, False),
            (4, 2048, False),
            (4, 2048, True),
            (4, 4096, True),
        ],
    )
    add(
        "llama3.2-1b",
        "lora",
        "bf16",
        "all-linear",
        [
            (1, 2048, False),
            (4, 2048, True),
        ],
    )
    # --- Llama 3.2 3B ---
    add(
        "llama3.2-3b",
        "full_finetune",
        "bf16",
        "",
        [
            (1, 2048, False),
            (2, 2048, False),
            (1, 2048, True),
            (4, 4096, True),
        ],
    )
    add(
        "llama3.2-3b",
        "full_finetune",
        "amp_bf16",
        "",
        [
            (1, 2048, False),
            (1, 2048, True),
            (1, 2048, True, "foreach"),
        ],
    )
    add(
        "llama3.2-3b",
        "lora",
        "bf16",
        "q_proj,v_proj",
        [
            (1, 2048, False),
            (2, 4096, True),
        ],
    )
    add(
        "llama3.2-3b",
        "lora",
        "bf16",
        "all-linear",
        [
            (2, 4096, True),
        ],
    )
    # --- Llama 3.1 8B ---
    add(
        "llama3.1-8b",
        "lora",
        "bf16",
        "q_proj,v_proj",
        [
            (1, 2048, False),
            (2, 2048, False),
            (1, 2048, True),
            (4, 4096, True),
        ],
    )
    add(
        "llama3.1-8b",
        "lora",
        "bf16",
        "all-linear",
        [
            (1, 2048, False),
            (1, 2048, True),
            (4, 4096, True),
        ],
    )
    add(
        "llama3.1-8b",
        "full_finetune",
        "bf16",
        "",
        [
            (1, 2048, True),
            (2, 4096, True),
            (1, 2048, False),
        ],
    )
    # fp32 master weights for 8B: ~16 B/param = ~120 GiB of states; may OOM on 139 GiB (recorded if so).
    add(
        "llama3.1-8b",
        "full_finetune",
        "amp_bf16",
        "",
        [
            (1, 512, True),
        ],
    )
    return P


def default_out() -> str:
    out_dir = os.environ.get("OUT")
    return os.path.join(out_dir, "measured.csv") if out_dir else "measured.csv"


def print_plan(plans: list[Plan]) -> None:
    print(
        f"{len(plans)} planned configurations ({2 * len(plans)} CSV rows: -alloc and -resv each), {STEPS} steps each:"
    )
    last = None
    for p in plans:
        if p.model != last:
            n = expected_params(p.model)
            print(f"# {p.model} = {MODELS[p.model]['name']} shapes, {n:,} params (random init)")
            last = p.model
        print(
            f"  {p.slug:68s} method={p.method:13s} precision={p.precision:8s} "
            f"targets={p.targets or '-':14s} micro_batch={p.mbs} seq_len={p.seq} gc={p.gc} adamw={p.impl}"
        )


# ----------------------------------------------------------------------------------------------
# Run path (needs torch, transformers, peft, and a CUDA device)
# ----------------------------------------------------------------------------------------------
