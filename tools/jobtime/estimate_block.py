"""The `throughput` block of an estimate: on G × N GPUs, which layout the tool picks, tokens/s per GPU, step time,
MFU, communication share, and where each figure comes from (the same check_topology the ranking uses)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from tools.gpus import lookup_gpu
from tools.jobtime.candidate import Candidate
from tools.jobtime.throughput import FLOPS_SOURCE, flops_per_token, peak_tflops
from tools.jobtime.topology import check_topology
from tools.jobtime.workload import workload_for_request
from tools.memory import Estimate, EstimateRequest


class ThroughputBlock(BaseModel):
    """Training speed of the estimated job on a set of GPUs, each figure with its source."""

    gpu: str
    gpus: int
    gpus_per_node: int
    runnable: bool
    verdict: str
    layout: str | None = Field(description="single_gpu, ddp, zero2, fsdp, hsdp or tensor_parallel.")
    tensor_parallel: int | None
    micro_batch_size: int | None = Field(description="Per GPU; smaller than asked only when that is what fits.")
    gradient_checkpointing: bool | None
    gradient_accumulation_steps: int | None
    per_gpu_gib: float | None = Field(
        description="Per-GPU memory in this layout (the estimate above is for the sharding it was asked for)."
    )
    tokens_per_s_per_gpu: float | None
    tokens_per_s: float | None = Field(description="All GPUs together.")
    step_time_s: float | None = Field(description="Seconds per micro-step (compute + exposed communication).")
    optimizer_step_s: float | None = Field(description="Seconds per optimizer step (all accumulation micro-steps).")
    mfu: float | None = Field(description="Model FLOPs (6N + 12·L·H·T, no recompute) / dense peak.")
    hfu: float | None = Field(description="Hardware FLOPs (recompute counted) / dense peak.")
    comm_share: float | None = Field(description="Exposed communication / step time.")
    sources: dict[str, str] = Field(description="Where each figure comes from.")
    assumptions: list[str]


class EstimateWithThroughput(Estimate):
    """An estimate, plus its throughput block when a GPU was named."""

    throughput: ThroughputBlock | None = None


def throughput_block(
    request: EstimateRequest, *, gpu: str, gpus: int, gpus_per_node: int | None = None
) -> ThroughputBlock:
    """The layout and speed check_topology gives this request on `gpus` × `gpu` (one node unless told), with the
    request's own checkpointing setting, so the block and the memory estimate describe the same run."""
    workload = workload_for_request(request)
    candidate = Candidate(gpu=gpu, gpu_count=gpus, gpus_per_node=gpus_per_node, vram_gib=request.vram_gib)
    result = check_topology(workload, candidate)
    sources = {
        "layout": "tools/jobtime/layouts.py search: data parallel first (DDP, ZeRO-2, FSDP, HSDP), smaller "
        "micro-batches before tensor parallelism, TP only inside NVLink when sharding cannot fit",
        "tokens_per_s_per_gpu": result.utilisation_source or "unknown: no tensor TFLOPS for this GPU",
        "comm_share": "NCCL cost model, hardware.md §2.3-2.4 (tools/jobtime/collectives.py)",
        "mfu": FLOPS_SOURCE,
    }
    empty = dict(
        layout=None,
        tensor_parallel=None,
        micro_batch_size=None,
        gradient_checkpointing=None,
        gradient_accumulation_steps=None,
        per_gpu_gib=None,
        tokens_per_s_per_gpu=None,
        tokens_per_s=None,
        step_time_s=None,
        optimizer_step_s=None,
        mfu=None,
        hfu=None,
        comm_share=None,
    )
    base = dict(
        gpu=result.gpu,
        gpus=result.gpu_count,
        gpus_per_node=result.gpus_per_node,
        runnable=result.runnable,
        verdict=result.verdict,
        sources=sources,
        assumptions=result.assumptions,
    )
    if not result.runnable or result.compute_s_per_step is None:
        return ThroughputBlock(**base, **empty)
    micro = result.micro_batch_size or workload.micro_batch_size
    tp = result.tensor_parallel or 1
    step = result.compute_s_per_step + (result.exposed_comm_s_per_step or 0.0)
    per_gpu = micro * workload.seq_len / (tp * step)
    model_flops = flops_per_token(
        workload.arch,
        method=workload.method,
        seq_len=workload.seq_len,
        gradient_checkpointing=False,
        trainable_params=workload.trainable_params,
    ).total
    hardware_flops = workload.flops_for(bool(result.gradient_checkpointing)).total
    spec = lookup_gpu(gpu)
    peak = peak_tflops(spec, workload.precision) if spec else None
    return ThroughputBlock(
        **base,
        layout=result.layout,
        tensor_parallel=tp,
        micro_batch_size=micro,
        gradient_checkpointing=result.gradient_checkpointing,
        gradient_accumulation_steps=result.gradient_accumulation_steps,
        per_gpu_gib=result.per_gpu_gib,
        tokens_per_s_per_gpu=round(per_gpu, 1),
        tokens_per_s=round(per_gpu * result.gpu_count, 1),
        step_time_s=round(step, 4),
        optimizer_step_s=round(step * (result.gradient_accumulation_steps or 1), 3),
        mfu=round(per_gpu * model_flops / (peak * 1e12), 4) if peak else None,
        hfu=round(per_gpu * hardware_flops / (peak * 1e12), 4) if peak else None,
        comm_share=round(result.exposed_comm_share, 4) if result.exposed_comm_share is not None else None,
    )
