"""The estimator's boundary: the request it takes, the estimate it returns, and the defaults both the CLI and the
chat use (one place, so `gpu-advisor estimate` and a conversation answer the same question the same way)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from contract.jobspec import MAX_SEQ_LEN, Method, Optimizer, Precision
from tools.memory.defaults import DEFAULTS, Loss, OptimizerImpl

GIB = 1024**3
Sharding = Literal["none", "ddp", "zero1", "zero2", "zero3", "fsdp"]
Offload = Literal["none", "optimizer", "optimizer+params"]

CUDA_CONTEXT_GIB = 0.55
"""CUDA context + kernels with lazy module loading (HF measured 1.3 GB without it on V100; 0.3-2 GiB reported)."""


class EstimateRequest(BaseModel):
    """Everything the estimator needs; defaults are the common Hugging Face training setup."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(default=None, description="Registry name, e.g. 'llama-3.1-8b' or an HF repo id.")
    config_path: str | None = Field(default=None, description="Path to a HuggingFace config.json.")
    params_b: float | None = Field(
        default=None,
        gt=0,
        le=100_000,
        allow_inf_nan=False,
        description="Size in billions when the model is not in the registry.",
    )
    method: Method = Field(default=DEFAULTS.method, description="pretrain, full_finetune (default), lora or qlora.")
    precision: Precision | None = Field(default=None, description="Default amp_bf16 for full training, bf16 for LoRA.")
    optimizer: Optimizer = Field(
        default=DEFAULTS.optimizer, description="adamw (default), adamw_8bit, paged_adamw_8bit, sgd or adafactor."
    )
    optimizer_impl: OptimizerImpl = Field(
        default=DEFAULTS.optimizer_impl,
        description="AdamW implementation: fused (HF Trainer default, no temporary), foreach (one state-sized "
        "temporary in the step; torch.optim.AdamW's default) or for_loop (two parameter-sized temporaries).",
    )
    micro_batch_size: int = Field(
        default=DEFAULTS.micro_batch_size, ge=1, le=1_000_000, description="Sequences per GPU per micro-step."
    )
    seq_len: int = Field(default=DEFAULTS.seq_len, ge=1, le=MAX_SEQ_LEN, description="Tokens per sequence.")
    gradient_checkpointing: bool = Field(
        default=DEFAULTS.gradient_checkpointing, description="Recompute activations in the backward pass (default on)."
    )
    flash_attention: bool = Field(
        default=DEFAULTS.flash_attention, description="Memory-efficient attention: no seq_len x seq_len scores kept."
    )
    lora_rank: int = Field(default=DEFAULTS.lora_rank, ge=1, le=65_536, description="LoRA/QLoRA adapter rank.")
    lora_targets: str = Field(
        default=DEFAULTS.lora_targets, description="'all-linear' or module names: q_proj,v_proj,..."
    )
    num_gpus: int = Field(default=1, ge=1, le=100_000, description="GPUs the job runs on.")
    sharding: Sharding = Field(default="none", description="none, ddp, zero1, zero2, zero3 or fsdp.")
    tensor_parallel: int = Field(
        default=1, ge=1, le=1024, description="Tensor-parallel degree (must divide num_gpus and the model's heads)."
    )
    pipeline_parallel: int = Field(default=1, ge=1, le=1024, description="Pipeline-parallel stages.")
    offload: Offload = Field(default="none", description="none, optimizer or optimizer+params (ZeRO/FSDP only).")
    loss: Loss = Field(
        default=DEFAULTS.loss, description="How the loss treats logits: fp32 upcast (HF), half, fused kernel."
    )
    qlora_upcast: bool | None = Field(
        default=DEFAULTS.qlora_upcast,
        description="QLoRA recipe: true = peft's prepare_model_for_kbit_training (embeddings, head, norms and the "
        "residual stream in fp32); false = TRL's bf16 casting; unset = the upcast unless that would "
        "need more than LoRA.",
    )
    cuda_context_gib: float = Field(
        default=CUDA_CONTEXT_GIB,
        ge=0,
        le=16,
        allow_inf_nan=False,
        description="CUDA context and kernels per process, in GiB.",
    )
    gpu: str | None = Field(default=None, description="GPU name to check the fit against, e.g. 'A100-80GB'.")
    vram_gib: float | None = Field(
        default=None,
        gt=0,
        le=100_000,
        allow_inf_nan=False,
        description="Usable memory per GPU to check the fit against.",
    )

    @model_validator(mode="after")
    def _check_layout(self) -> EstimateRequest:
        """Reject inconsistent parallel layouts with a message naming the problem."""
        if not (self.model or "").strip() and not (self.config_path or "").strip() and self.params_b is None:
            raise ValueError("give a model name, a config.json path or a size in billions of parameters")
        model_parallel = self.tensor_parallel * self.pipeline_parallel
        if self.num_gpus % model_parallel:
            raise ValueError(
                f"{self.num_gpus} GPUs cannot be split into tensor x pipeline groups of "
                f"{self.tensor_parallel} x {self.pipeline_parallel}"
            )
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
    unknown_model: str | None = Field(
        default=None,
        description="The model name as the user gave it when it is not "
        "in the registry and a generic decoder of the stated size stood in for it.",
    )
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
