"""Layout search: which ways of laying a job out on a set of GPUs are tried, in the order people run them.

Data parallelism first (DDP when the model states fit, then ZeRO-2, then FSDP/ZeRO-3, hybrid sharding across nodes),
each with the user's micro-batch and, when the user left it open, without activation checkpointing; when a sharded
layout does not fit at the stated micro-batch, smaller micro-batches with more gradient accumulation (the same
global batch: the same training) come next. Tensor parallelism is tried only inside an NVLink node and only when
sharding alone cannot fit or scale (no sharded layout fits, more replicas than sequences in the global batch, or
communication bound), at every degree that divides the attention and KV heads.
"""

from __future__ import annotations

from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel, Field

from tools.gpus import GpuSpec
from tools.jobtime.collectives import Layout, Links, Plan, Traffic, comm_on, traffic
from tools.jobtime.micro_step import StepCompute, StepShape, step_compute
from tools.jobtime.workload import Workload
from tools.memory import layout_gib, layout_question

M = TypeVar("M", bound=BaseModel)
COMM_BOUND_SHARE = 0.25
"""Exposed communication above this share of a step is reported as a bottleneck (product threshold)."""


class LayoutOption(BaseModel):
    """One way to lay the job out on the candidate, with its memory and per-step times."""

    layout: Layout
    sharding: str
    tensor_parallel: int
    per_gpu_gib: float
    fits: bool
    compute_s: float | None = Field(description="Compute seconds per micro-step on each GPU.")
    comm_s: float = Field(description="Communication seconds per micro-step if nothing overlaps.")
    exposed_comm_s: float = Field(description="Communication left after overlapping with compute.")
    comm_share: float | None = Field(description="comm / (compute + comm): the share without overlap.")
    exposed_comm_share: float | None = Field(description="exposed comm / step time: the share with overlap.")
    collective: str
    gradient_checkpointing: bool = Field(default=True, description="Activation recompute in this layout.")
    gradient_accumulation_steps: int = Field(default=1, description="Micro-steps per optimizer step.")
    micro_batch_size: int = Field(default=1, description="Sequences per GPU per micro-step in this layout.")
    utilisation: float | None = Field(default=None, description="Share of dense peak the compute reaches.")


class Tried(NamedTuple):
    """One layout tried, with LayoutOption's fields in its order: the search tries ~1,800 per new job, and the
    pydantic LayoutOption is built only where a full topology result is asked for (`option`)."""

    layout: Layout
    sharding: str
    tensor_parallel: int
    per_gpu_gib: float
    fits: bool
    compute_s: float | None
    comm_s: float
    exposed_comm_s: float
    comm_share: float | None
    exposed_comm_share: float | None
    collective: str
    gradient_checkpointing: bool
    gradient_accumulation_steps: int
    micro_batch_size: int
    utilisation: float | None

    def option(self) -> LayoutOption:
        """The same values as a LayoutOption (each already of its field's type)."""
        return trusted(LayoutOption, self._asdict())


_UNSEEN = object()


def memory_gib(workload: Workload, total: int, plan: Plan, checkpointing: bool, micro: int) -> float | None:
    """Per-GPU GiB (nvidia-smi view) for a layout; None when the model cannot be split that way. Cached."""
    return layout_memory(workload, total, plan.sharding, plan.tp, checkpointing, micro)


def layout_memory(
    workload: Workload, gpus: int, sharding: str, tp: int, checkpointing: bool, micro: int
) -> float | None:
    """Per-GPU GiB of the workload's setup on `gpus` GPUs with this sharding, tensor-parallel degree, checkpointing
    and micro-batch (None when the model cannot be split that way): computed once per distinct memory question
    (tools.memory.layout_question) and workload, for the layout search and the ranking's memory floor alike."""
    pp = workload.request.pipeline_parallel
    key = layout_question(pp=pp, gpus=gpus, sharding=sharding, tp=tp, checkpointing=checkpointing, batch=micro)
    found = workload.memory_cache.get(key, _UNSEEN)
    if found is _UNSEEN:
        try:
            found = layout_gib(
                workload.stated_setup, gpus=gpus, sharding=sharding, tp=tp, checkpointing=checkpointing, batch=micro
            )
        except ValueError:
            found = None
        workload.memory_cache[key] = found
    return found  # type: ignore[return-value]


def layout_slot(
    workload: Workload, plan: Plan, total: int, nodes: int, checkpointing: bool, micro: int
) -> tuple[float, Traffic] | None:
    """Per-GPU GiB and traffic of a layout on a GPU geometry (None when the model cannot be split that way):
    neither depends on which GPU or links, so every candidate shape of the geometry shares them. Cached per
    workload."""
    key = (plan.layout, plan.sharding, plan.tp, total, nodes, checkpointing, micro)
    found = workload.slot_cache.get(key, _UNSEEN)
    if found is _UNSEEN:
        group = total // nodes if plan.layout == "hsdp" else total
        per_gpu = memory_gib(workload, group, plan, checkpointing, micro)
        found = workload.slot_cache[key] = (
            None
            if per_gpu is None
            else (
                float(per_gpu),
                traffic(workload, plan, total, nodes, gradient_checkpointing=checkpointing, micro_batch=micro),
            )
        )
    return found  # type: ignore[return-value]


def compute(
    workload: Workload, gpu: GpuSpec | None, tp: int, checkpointing: bool, micro: int | None = None
) -> StepCompute | None:
    """Compute of one micro-step on each GPU (tools.jobtime.micro_step), None when the GPU's speed is unknown; cached per
    workload (the same GPU, degree, checkpointing and micro-batch recur across candidate shapes)."""
    if gpu is None:
        return None
    key = (id(gpu), tp, checkpointing, micro or workload.micro_batch_size)
    found = workload.compute_cache.get(key)
    if found is not None and found[0] is gpu:
        return found[1]  # type: ignore[return-value]
    result = _compute(workload, gpu, tp, checkpointing, micro)
    workload.compute_cache[key] = (gpu, result)
    return result


def _compute(workload: Workload, gpu: GpuSpec, tp: int, checkpointing: bool, micro: int | None) -> StepCompute | None:
    """compute(), uncached."""
    return step_compute(step_shape(workload, tp, checkpointing, micro), gpu, workload.precision)


def step_shape(workload: Workload, tp: int, checkpointing: bool, micro: int | None) -> StepShape:
    """What one micro-step of the workload computes on each GPU at this tensor-parallel degree, checkpointing and
    micro-batch (the stated one when None)."""
    adapters = workload.method in ("lora", "qlora")
    return StepShape(
        tokens=(micro or workload.micro_batch_size) * workload.seq_len,
        hidden=workload.arch.hidden,
        layers=workload.arch.layers,
        vocab=workload.arch.vocab,
        tensor_parallel=tp,
        method=workload.method,
        checkpointing=checkpointing,
        flops=workload.flops_for(checkpointing),
        adapter_width=workload.trainable_params / max(workload.request.lora_rank, 1) if adapters else 0.0,
        quantized_params=workload.total_params if workload.method == "qlora" else 0,
    )


def tp_degrees(workload: Workload, per_node: int) -> list[int]:
    """Tensor-parallel degrees above 1 that fit in a node and divide the attention and KV heads."""
    heads, kv = workload.arch.heads, workload.arch.kv_heads or workload.arch.heads
    return [
        tp for tp in range(2, per_node + 1) if per_node % tp == 0 and heads % tp == 0 and (kv % tp == 0 or tp % kv == 0)
    ]


def data_parallel_plans(total: int, per_node: int, nodes: int) -> tuple[Plan, ...]:
    """Layouts without tensor parallelism, in the order they are preferred."""
    if total == 1:
        return _SINGLE
    return _HYBRID if nodes > 1 and per_node > 1 else _SHARDED


_SINGLE = (Plan(layout="single_gpu", sharding="none", tp=1),)
_SHARDED = (
    Plan(layout="ddp", sharding="ddp", tp=1),
    Plan(layout="zero2", sharding="zero2", tp=1),
    Plan(layout="fsdp", sharding="fsdp", tp=1),
)
_HYBRID = (*_SHARDED, Plan(layout="hsdp", sharding="fsdp", tp=1))
"""The data-parallel plans, built once (frozen)."""


def tensor_parallel_plans(workload: Workload, per_node: int, nodes: int, link_kind: str) -> list[Plan]:
    """Tensor parallel inside an NVLink node at every degree the heads allow (data parallel across the rest)."""
    if per_node <= 1 or link_kind != "nvlink":
        return []
    return [
        Plan(layout="tensor_parallel", sharding="ddp" if nodes > 1 or tp < per_node else "none", tp=tp)
        for tp in tp_degrees(workload, per_node)
    ]


def plan_options(
    workload: Workload,
    gpu: GpuSpec | None,
    plan: Plan,
    links: Links,
    total: int,
    nodes: int,
    usable: float,
    overlap: bool,
    *,
    shrink: bool = True,
) -> list[Tried]:
    """One layout with the workload's checkpointing and, when the user left it open, without, at the stated
    micro-batch; only when neither fits (and `shrink`), each at the largest smaller micro-batch that does."""
    variants = workload.checkpointing_variants
    stated = workload.micro_batch_size
    options = []
    for ckpt in variants:
        slot = layout_slot(workload, plan, total, nodes, ckpt, stated)
        if slot is not None:
            options.append(_option(workload, gpu, plan, links, *slot, usable, ckpt, stated, overlap))
    if not shrink or not options or any(o.fits for o in options):
        return options
    smaller = []
    for ckpt in variants:
        for micro in workload.smaller_micro_batches:
            slot = layout_slot(workload, plan, total, nodes, ckpt, micro)
            if slot is not None and (slot[0] <= usable or micro == 1):
                smaller.append(_option(workload, gpu, plan, links, *slot, usable, ckpt, micro, overlap))
                break
    return options + smaller


def _option(
    workload: Workload,
    gpu: GpuSpec | None,
    plan: Plan,
    links: Links,
    per_gpu: float,
    moved: Traffic,
    usable: float,
    ckpt: bool,
    micro: int,
    overlap: bool,
) -> Tried:
    """Times and memory of one layout at one checkpointing setting and micro-batch (every value already of its
    LayoutOption field's type: floats from float arithmetic, the plan's own int and str)."""
    step = compute(workload, gpu, plan.tp, ckpt, micro)
    seconds = step.seconds if step else None
    comm = comm_on(moved, links, seconds, overlap)
    return tried_of(
        plan,
        per_gpu,
        usable,
        seconds,
        comm.seconds,
        comm.exposed,
        comm.label,
        ckpt,
        comm.accumulation,
        micro,
        step.utilisation_value if step else None,
    )


def tried_of(
    plan: Plan,
    per_gpu: float,
    usable: float,
    seconds: float | None,
    comm_s: float,
    exposed_s: float,
    label: str,
    ckpt: bool,
    accumulation: int,
    micro: int,
    utilisation: float | None,
) -> Tried:
    """A layout's Tried from its figures: whether it fits `usable`, and the communication shares of its step (none
    without the step's seconds). The per-shape search and the batch search (tools.jobtime.batch.search) both make
    theirs here."""
    share = hidden_share = None
    if seconds is not None:
        both, hidden = seconds + comm_s, seconds + exposed_s
        share = comm_s / both if both > 0 else None
        hidden_share = exposed_s / hidden if hidden > 0 else None
    return Tried._make(
        (
            plan.layout,
            plan.sharding,
            plan.tp,
            per_gpu,
            per_gpu <= usable,
            seconds,
            comm_s,
            exposed_s,
            share,
            hidden_share,
            label,
            ckpt,
            accumulation,
            micro,
            utilisation,
        )
    )


def trusted(cls: type[M], values: dict[str, Any]) -> M:
    """A model built from `values` holding every field, already of its field's type (what model_construct does
    when given every field, without its per-field alias and default handling: the search builds thousands)."""
    model = cls.__new__(cls)
    object.__setattr__(model, "__dict__", values)
    object.__setattr__(model, "__pydantic_fields_set__", set(values))
    object.__setattr__(model, "__pydantic_extra__", None)
    object.__setattr__(model, "__pydantic_private__", None)
    return model


def step_time(option: Tried | LayoutOption) -> float:
    """Seconds per micro-step of a layout (compute plus exposed communication)."""
    return (option.compute_s or 0.0) + option.exposed_comm_s


def time_per_token(option: Tried | LayoutOption, total: int, seq_len: int) -> float:
    """Seconds per trained token across the whole candidate (layouts differ in replicas and micro-batch)."""
    replicas = total // option.tensor_parallel
    return step_time(option) / (replicas * option.micro_batch_size * seq_len)


def search(
    workload: Workload,
    gpu: GpuSpec | None,
    links: Links,
    total: int,
    per_node: int,
    nodes: int,
    usable: float,
    overlap: bool,
) -> list[Tried]:
    """Every layout tried, data-parallel first; tensor-parallel ones only when sharding cannot fit or scale."""
    options: list[Tried] = []
    for plan in data_parallel_plans(total, per_node, nodes):
        options.extend(plan_options(workload, gpu, plan, links, total, nodes, usable, overlap))
    fitting = [o for o in options if o.fits]
    best = min(fitting, key=lambda o: time_per_token(o, total, workload.seq_len)) if fitting else None
    too_many_replicas = total > workload.global_batch_sequences()
    bound = best is not None and (best.exposed_comm_share or 0.0) >= COMM_BOUND_SHARE
    if best is None or too_many_replicas or bound:
        for plan in tensor_parallel_plans(workload, per_node, nodes, links.kind):
            options.extend(plan_options(workload, gpu, plan, links, total, nodes, usable, overlap))
    return options
