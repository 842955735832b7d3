"""The defaults a job that does not say otherwise gets, in a module that imports nothing heavy: the CLI shows them in
its help text (tools.memory.request, the estimator's boundary, re-exports them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from contract.jobspec import Method, Optimizer

OptimizerImpl = Literal["fused", "foreach", "for_loop"]
Loss = Literal["fp32", "half", "fused"]


@dataclass(frozen=True)
class JobDefaults:
    """What a job that does not say otherwise is assumed to be: the common Hugging Face / TRL fine-tuning recipe.
    The CLI, the web API and the chat all take their defaults from DEFAULTS, so the same question gets the same
    answer everywhere."""

    method: Method = "full_finetune"
    seq_len: int = 2048
    micro_batch_size: int = 1
    gradient_checkpointing: bool = True
    """On, as in TRL's SFTConfig and peft's prepare_model_for_kbit_training (the usual fine-tuning recipe)."""
    optimizer: Optimizer = "adamw"
    optimizer_impl: OptimizerImpl = "fused"
    """transformers v5 TrainingArguments optim default: adamw_torch_fused (docs: huggingface.co/docs/transformers/
    optimizers); the fused kernel updates in place and allocates no state-sized temporary."""
    flash_attention: bool = True
    lora_rank: int = 16
    lora_targets: str = "all-linear"
    loss: Loss = "fp32"
    qlora_upcast: bool | None = None
    """None: peft's fp32 upcast of the non-quantised modules (the published HF QLoRA runs match it), unless that
    needs more than LoRA for the same job; then TRL's bf16 casting, which an expert would use there."""


DEFAULTS = JobDefaults()
