"""The job-spec contract: `JobSpec`, the single structure every part of gpu-advisor reads and writes."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from contract.languages import Language

Method = Literal["pretrain", "full_finetune", "lora", "qlora"]
Precision = Literal["fp32", "amp_bf16", "amp_fp16", "bf16", "fp16"]
Optimizer = Literal["adamw", "adamw_8bit", "paged_adamw_8bit", "sgd", "adafactor"]
Currency = Literal["USD", "EUR", "IDR"]

MAX_SEQ_LEN = 10_000_000
MAX_BUDGET = 1e15
"""Larger amounts are typing accidents ("1e308 USD"), not budgets; the parser drops them with a note."""
MAX_DATASET_TOKENS = 10**16
"""Ten quadrillion tokens: far above any real corpus (Llama 3 used 15T); also keeps numbers inside 64 bits."""
MAX_DATASET_EXAMPLES = 10**14


class Budget(BaseModel):
    """A spending limit for the whole job in one currency."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    amount: float = Field(gt=0, le=MAX_BUDGET, allow_inf_nan=False, description="Money available for the whole job.")
    currency: Currency = Field(default="USD", description="ISO code of the amount: USD, EUR or IDR.")


class JobSpec(BaseModel):
    """What the user wants to train, on what, and under which limits; every field but `language` is optional."""

    model_config = ConfigDict(extra="forbid")

    language: Language = Field(description="Language of the conversation: it, id or en.")
    method: Method | None = Field(default=None, description="pretrain, full_finetune, lora or qlora.")
    model: str | None = Field(
        default=None, description="Model registry id, e.g. 'llama-3.1-8b'.", json_schema_extra={"pattern": r"\S"}
    )  # not blank, as _not_blank checks
    params_b: float | None = Field(
        default=None, gt=0, le=100_000, allow_inf_nan=False, description="Model size in billions of parameters."
    )
    precision: Precision | None = Field(default=None, description="Training precision.")
    optimizer: Optimizer | None = Field(default=None, description="Optimizer.")
    seq_len: int | None = Field(default=None, ge=1, le=MAX_SEQ_LEN, description="Tokens per sequence.")
    micro_batch_size: int | None = Field(default=None, ge=1, le=1_000_000, description="Sequences per GPU per step.")
    gradient_checkpointing: bool | None = Field(default=None, description="Recompute activations in backward.")
    dataset_tokens: int | None = Field(
        default=None, ge=1, le=MAX_DATASET_TOKENS, description="Tokens in the training set (one epoch)."
    )
    dataset_examples: int | None = Field(
        default=None, ge=1, le=MAX_DATASET_EXAMPLES, description="Examples in the training set."
    )
    epochs: float | None = Field(
        default=None, gt=0, le=10_000, allow_inf_nan=False, description="Passes over the data."
    )
    num_gpus: int | None = Field(default=None, ge=1, le=100_000, description="GPUs wanted or allowed.")
    max_gpus: int | None = Field(
        default=None, ge=1, le=100_000, description="The most GPUs the job may use in all ('at most 4 GPUs')."
    )
    max_nodes: int | None = Field(
        default=None, ge=1, le=10_000, description="The most machines the job may span ('one machine only': 1)."
    )
    gpu: str | None = Field(
        default=None,
        description="Canonical GPU name, e.g. 'H100' or 'A100-80GB'.",
        json_schema_extra={"pattern": r"\S"},
    )
    budget: Budget | None = Field(default=None, description="Money available for the whole job.")
    deadline_hours: float | None = Field(
        default=None,
        gt=0,
        le=1_000_000,
        allow_inf_nan=False,
        description="Wall-clock hours until the job must be done.",
    )
    interruptible_ok: bool | None = Field(default=None, description="Whether spot/preemptible instances are allowed.")
    providers: list[str] | None = Field(default=None, description="Cloud providers the user wants (lower case).")
    regions: list[str] | None = Field(default=None, description="Regions the user wants.")
    gpu_memory_gb: float | None = Field(
        default=None,
        gt=0,
        le=10_000,
        allow_inf_nan=False,
        description="Memory per card the user has or asks about, in GB as stated "
        "('a single 24 GB GPU'); a hardware constraint for yes/no answers.",
    )

    @field_validator("model", "gpu")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        """Reject empty names instead of treating them as a name."""
        if value is not None and not value.strip():
            raise ValueError("must not be empty")
        return value.strip() if value is not None else None

    @field_validator("providers", "regions")
    @classmethod
    def _clean_names(cls, value: list[str] | None) -> list[str] | None:
        """Lower-case, strip and de-duplicate provider and region names; an empty list means no wish."""
        if value is None:
            return None
        cleaned = list(dict.fromkeys(v.strip().lower() for v in value if v and v.strip()))
        return cleaned or None


def _excerpt(text: str, limit: int) -> str:
    """`text` cut to `limit` characters with an ellipsis (errors never echo a whole input back)."""
    return text if len(text) <= limit else text[:limit] + "…"


def describe_validation_error(error: ValidationError) -> str:
    """Turn a pydantic error into one readable line naming each bad field (names and messages cut short, at most
    five fields: a huge or hostile input is never echoed back whole)."""
    items = error.errors()
    parts = [
        f"{_excerpt('.'.join(str(p) for p in item['loc']) or 'input', 60)}: {_excerpt(str(item['msg']), 160)}"
        for item in items[:5]
    ]
    if len(items) > 5:
        parts.append(f"and {len(items) - 5} more")
    return "; ".join(parts)
