"""A job spec resolved once into what the topology and time models need: architecture, parameters, FLOPs per token,
and how many micro-steps share one optimizer step (gradient accumulation)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

from contract.jobspec import JobSpec
from tools.jobtime.throughput import TokenFlops, flops_per_token
from tools.lru import Lru
from tools.memory import (
    EstimateRequest,
    LayoutQuestion,
    Setup,
    build_setup,
    estimate,
    request_for_spec,
    resolve_arch,
)
from tools.models import ModelArch

PRETRAIN_GLOBAL_BATCH_TOKENS = 1_048_576
"""Tokens per optimizer step when pre-training: ~1M (GPT-3 used 0.5-3.2M by size, Llama 2 4M; Brown et al. 2020
table 2.1, Touvron et al. 2023); a stated planning default."""
FINETUNE_GLOBAL_BATCH_SEQUENCES = 128
"""Sequences per optimizer step when fine-tuning: Stanford Alpaca's recipe (batch size 128, Taori et al. 2023)."""


@dataclass(frozen=True, kw_only=True)
class Workload:
    """A job spec resolved into what the topology and time models need."""

    request: EstimateRequest
    arch: ModelArch
    method: str
    precision: str
    micro_batch_size: int
    seq_len: int
    gradient_checkpointing: bool
    total_params: int
    trainable_params: int
    token_flops: TokenFlops
    assumptions: tuple[str, ...]
    checkpointing_optional: bool = False
    """True when the user did not ask for gradient checkpointing: a layout may drop it where memory allows."""
    token_flops_no_recompute: TokenFlops | None = None
    memory_cache: dict[LayoutQuestion, float | None] = field(default_factory=dict, compare=False)
    """Per-GPU GiB by memory question (tools.memory.layout_question): memory does not depend on which GPU, so offers
    share it, nor on the GPU count beyond the data-parallel degree, so layouts on several geometries do."""
    slot_cache: dict[tuple[str, str, int, int, int, bool, int], tuple[float, object] | None] = field(
        default_factory=dict, compare=False
    )
    """Per-GPU GiB and traffic by (layout, sharding, tensor parallel, GPUs, nodes, checkpointing, micro-batch):
    what every candidate shape of one GPU geometry shares (tools.jobtime.layouts.layout_slot)."""
    compute_cache: dict[tuple[int, int, bool, int], tuple[object, object]] = field(default_factory=dict, compare=False)
    """Step compute by (id of the GPU spec, tensor parallel, checkpointing, micro-batch), with the spec it was for:
    every candidate shape with the same GPU asks the same question (tools.jobtime.layouts.compute)."""

    @property
    def grad_bytes(self) -> float:
        """Bytes per gradient element communicated (FP32 under AMP and FP32, else 2)."""
        return 4.0 if self.precision in ("fp32", "amp_bf16", "amp_fp16") else 2.0

    @property
    def param_bytes(self) -> float:
        """Bytes per parameter all-gathered by ZeRO-3/FSDP (4-bit base for QLoRA, BF16 compute copy otherwise)."""
        if self.method == "qlora":
            return 0.5
        return 4.0 if self.precision == "fp32" else 2.0

    def global_batch_sequences(self) -> float:
        """Sequences per optimizer step (stated planning default: ~1M tokens pre-training, 128 fine-tuning)."""
        if self.method == "pretrain":
            return PRETRAIN_GLOBAL_BATCH_TOKENS / self.seq_len
        return float(FINETUNE_GLOBAL_BATCH_SEQUENCES)

    def accumulation_steps(self, replicas: int, micro_batch: int | None = None) -> int:
        """Micro-steps per optimizer step for `replicas` data-parallel copies (stated global batch, at least 1)."""
        micro = micro_batch or self.micro_batch_size
        return max(1, math.ceil(self.global_batch_sequences() / (micro * max(replicas, 1)) - 1e-9))

    @cached_property
    def stated_setup(self) -> Setup:
        """The estimator's setup of the request (tools.memory.layout_gib varies its layout)."""
        return build_setup(self.request, self.arch)

    @cached_property
    def checkpointing_variants(self) -> tuple[bool, ...]:
        """Activation checkpointing settings a layout is tried with: the workload's, and off when the user left it
        open."""
        return (self.gradient_checkpointing, False) if self.checkpointing_optional else (self.gradient_checkpointing,)

    @cached_property
    def smaller_micro_batches(self) -> tuple[int, ...]:
        """Halvings of the stated micro-batch down to 1 (tried when the stated one does not fit)."""
        sizes = [self.micro_batch_size]
        while sizes[-1] > 1:
            sizes.append(sizes[-1] // 2)
        return tuple(sizes[1:])

    def flops_for(self, gradient_checkpointing: bool) -> TokenFlops:
        """FLOPs per token with or without activation recompute."""
        if gradient_checkpointing == self.gradient_checkpointing or self.token_flops_no_recompute is None:
            return self.token_flops
        return self.token_flops_no_recompute


_WORKLOADS_MAX = 256
_WORKLOADS: Lru[tuple[str, tuple[str, ...], bool | None], Workload] = Lru(_WORKLOADS_MAX)
"""Workloads by what they depend on (the estimator request the spec implies, the defaults it filled, whether the
user set gradient checkpointing): reused across turns and jobs on the same model (with their memory_cache); least
recently used dropped first."""


def build_workload(spec: JobSpec) -> Workload:
    """Resolve a JobSpec once: architecture, trainable parameters and FLOPs per token (with and without recompute
    when the user left gradient checkpointing open); jobs that differ only in data, budget or deadline share it."""
    request, filled = request_for_spec(spec)
    key = (request.model_dump_json(), tuple(filled), spec.gradient_checkpointing)
    return _WORKLOADS.get_or_make(key, lambda: _resolve(spec, request, filled))


def shape_workload(spec: JobSpec) -> Workload:
    """The workload a candidate shape's layout search reads: the spec's, less the GPU count it states (each shape's
    layouts set their own GPUs and sharding, tools.memory.layout_gib), so "and with 4 GPUs?" keeps the job's
    verdicts and every kept verdict explains itself the same way whichever job searched it first."""
    return build_workload(spec.model_copy(update={"num_gpus": None}) if spec.num_gpus is not None else spec)


def _resolve(spec: JobSpec, request: EstimateRequest, filled: list[str]) -> Workload:
    """build_workload, uncached (`request`, `filled`: request_for_spec(spec))."""
    optional = spec.gradient_checkpointing is None and request.gradient_checkpointing
    return workload_for_request(request, filled, checkpointing_optional=optional)


def workload_for_request(
    request: EstimateRequest, filled: list[str] | tuple[str, ...] = (), *, checkpointing_optional: bool = False
) -> Workload:
    """A workload straight from an estimator request (the `estimate` command and the throughput eval use this;
    `checkpointing_optional`: a layout may drop gradient checkpointing where memory allows)."""
    base = estimate(request)
    arch = resolve_arch(request)
    flops = flops_per_token(
        arch,
        method=request.method,
        seq_len=request.seq_len,
        gradient_checkpointing=request.gradient_checkpointing,
        trainable_params=base.trainable_params,
    )
    optional = checkpointing_optional and request.gradient_checkpointing
    plain = (
        flops_per_token(
            arch,
            method=request.method,
            seq_len=request.seq_len,
            gradient_checkpointing=False,
            trainable_params=base.trainable_params,
        )
        if optional
        else None
    )
    return Workload(
        request=request,
        arch=arch,
        method=request.method,
        precision=base.precision,
        micro_batch_size=request.micro_batch_size,
        seq_len=request.seq_len,
        gradient_checkpointing=request.gradient_checkpointing,
        total_params=base.total_params,
        trainable_params=base.trainable_params,
        token_flops=flops,
        assumptions=tuple(filled),
        checkpointing_optional=optional,
        token_flops_no_recompute=plain,
    )
