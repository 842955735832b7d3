"""The defaults a job that does not say otherwise gets, in a module that imports nothing heavy: the CLI shows them in
its help text (tools.memory.request, the estimator's boundary, re-exports them)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from contract.jobspec import JobSpec, Method, Optimizer

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

LONGEST_EXAMPLE_SEQUENCE = 131_072
"""Examples longer than this on average are documents a trainer cuts into sequences, not one sequence each (the
longest context windows fine-tuned today: Llama 3.1, Qwen2.5 with YaRN)."""


def example_sequence(spec: JobSpec) -> int | None:
    """The sequence length a job's examples need when it states none: their average length (dataset tokens over
    examples) where that is over the default sequence, since an example is trained as one sequence; None where the
    spec states a sequence, gives no example count, or its examples fit the default (they are packed into
    default-length sequences), for documents (LONGEST_EXAMPLE_SEQUENCE) and for pre-training (cut into sequences)."""
    if spec.seq_len is not None or spec.method == "pretrain" or not spec.dataset_tokens or not spec.dataset_examples:
        return None
    length = math.ceil(spec.dataset_tokens / spec.dataset_examples)
    return length if DEFAULTS.seq_len < length <= LONGEST_EXAMPLE_SEQUENCE else None
