"""Topology checker: can a job run on a set of GPUs, in which layout, and how much of each step goes to communication.

Layouts: single GPU; data parallel (DDP: gradient all-reduce); ZeRO-2 (reduce-scatter gradients, all-gather updated
parameters); FSDP/ZeRO-3 (all-gather parameters in forward and backward, reduce-scatter gradients); tensor parallel
inside one NVLink node (activation all-reduces in every layer; data parallel across nodes). Collective times follow
NCCL's cost model (hardware.md §2.3): all-reduce 2(n-1)/n·S/B, all-gather and reduce-scatter (n-1)/n·S/B, with B the
bus bandwidth achievable on the link (measured fractions of spec, §2.4) and, across nodes, NCCL's hierarchical
conversion B = NIC rate per GPU·(n-1)/(k-1). Per-GPU memory comes from the VRAM estimator for each layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from contract.jobspec import JobSpec
from tools.estimator import Estimate, EstimateRequest, estimate, request_for_spec, resolve_arch
from tools.gpus import GpuSpec, lookup_gpu
from tools.models import ModelArch
from tools.throughput import (
    TokenFlops,
    Utilisation,
    backward_fraction,
    flops_per_token,
    peak_tflops,
    qlora_dequant_seconds,
    utilisation_for,
)

Interconnect = Literal["nvlink", "pcie", "unknown"]
Layout = Literal["single_gpu", "ddp", "zero2", "fsdp", "tensor_parallel"]
VerdictCode = Literal["fits_single_gpu", "multi_gpu_ok", "multi_node_ok", "pcie_comm_bound", "comm_bound",
                      "multi_node_slow_fabric", "needs_nvlink_node", "does_not_fit"]

NVLINK_EFFICIENCY = 0.80
"""All-reduce bus bandwidth / unidirectional NVLink spec: 78 % (8×A100 NVLink3), 82 % (8×H200 NVLink4 ring), §2.4."""
PCIE_EFFICIENCY = 0.80
"""Rule of thumb 80-90 % of unidirectional spec (measured PCIe5 H2D 88 %), hardware.md §2.1; lower end taken."""
NIC_EFFICIENCY = 0.74
"""Measured per-GPU NIC rate on 4× p6-b200: 37 of 50 GB/s (74 %), hardware.md §2.4."""
ASSUMED_PCIE_GBS = 31.0
"""PCIe Gen4 x16 unidirectional (hardware.md §2.1), used when the GPU table has no PCIe figure."""
ASSUMED_NODE_GBPS = 100.0
"""Unknown inter-node fabric: plain 100 Gb/s Ethernet per node (planning assumption; hardware.md §6: no sourced table)."""
COMM_BOUND_SHARE = 0.25
"""Exposed communication above this share of a step is reported as a bottleneck (product threshold)."""
DEFAULT_MEMORY_MARGIN = 0.05
"""Fraction of each GPU's memory kept free on top of the estimate (estimator error and fragmentation)."""
GIB = 1024 ** 3


class Candidate(BaseModel):
    """A set of GPUs to run on: which GPU, how many, how they are linked inside and between nodes."""

    model_config = ConfigDict(extra="forbid")

    gpu: str = Field(description="GPU name in any spelling, e.g. 'H100', 'A100-80GB'.")
    form_factor: str | None = None
    gpu_count: int = Field(ge=1, le=100_000, description="GPUs in total.")
    gpus_per_node: int | None = Field(default=None, ge=1, le=1024, description="GPUs per node; all in one if omitted.")
    interconnect: Interconnect = "unknown"
    nvlink_gbs: float | None = Field(default=None, gt=0, description="Per-GPU unidirectional NVLink GB/s override.")
    inter_node_gbps: float | None = Field(default=None, gt=0, description="Inter-node bandwidth per node, Gbit/s.")
    inter_node_fabric: str | None = None
    vram_gib: float | None = Field(default=None, gt=0, description="Memory per GPU override (e.g. from the offer).")


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


class TopologyResult(BaseModel):
    """Whether and how a job runs on a candidate, as a verdict code with parameters plus the numbers behind it."""

    verdict: VerdictCode
    runnable: bool
    params: dict[str, float | int | str | bool | None] = Field(
        description="Numbers a sentence for the verdict needs (language-independent).")
    summary: str = Field(description="English one-liner; the agent writes its own per language from code + params.")
    gpu: str
    gpu_count: int
    gpus_per_node: int
    nodes: int
    link: str = Field(description="'nvlink', 'nvlink-bridge' or 'pcie' inside a node.")
    link_busbw_gbs: float
    inter_node_busbw_gbs: float | None
    vram_gib: float
    usable_vram_gib: float
    memory_margin: float
    fits_on_one_gpu: bool
    layout: Layout | None
    sharding: str | None
    tensor_parallel: int | None
    per_gpu_gib: float | None
    compute_s_per_step: float | None
    comm_s_per_step: float | None
    exposed_comm_s_per_step: float | None
    comm_share: float | None
    exposed_comm_share: float | None
    slowdown: float | None = Field(description="Step time / compute time (1.0 = communication fully hidden).")
    utilisation: float | None
    utilisation_source: str | None
    options: list[LayoutOption]
    assumptions: list[str]


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
    memory_cache: dict[tuple[int, str, int], float | None] = field(default_factory=dict, compare=False)
    """Per-GPU GiB by (GPUs, sharding, tensor parallel): memory does not depend on which GPU, so offers share it."""

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


def build_workload(spec: JobSpec) -> Workload:
    """Resolve a JobSpec once: architecture, trainable parameters and FLOPs per token."""
    request, filled = request_for_spec(spec)
    base = estimate(request)
    arch = resolve_arch(request)
    flops = flops_per_token(arch, method=request.method, seq_len=request.seq_len,
                            gradient_checkpointing=request.gradient_checkpointing,
                            trainable_params=base.trainable_params)
    return Workload(request=request, arch=arch, method=request.method, precision=base.precision,
                    micro_batch_size=request.micro_batch_size, seq_len=request.seq_len,
                    gradient_checkpointing=request.gradient_checkpointing, total_params=base.total_params,
                    trainable_params=base.trainable_params, token_flops=flops, assumptions=tuple(filled))


def allreduce_s(size_bytes: float, ranks: int, busbw_gbs: float) -> float:
    """Ring all-reduce lower bound 2(n-1)/n·S/B (hardware.md §2.3)."""
    return 0.0 if ranks <= 1 else 2.0 * (ranks - 1) / ranks * size_bytes / (busbw_gbs * 1e9)


def gather_s(size_bytes: float, ranks: int, busbw_gbs: float) -> float:
    """All-gather or reduce-scatter lower bound (n-1)/n·S/B (hardware.md §2.3)."""
    return 0.0 if ranks <= 1 else (ranks - 1) / ranks * size_bytes / (busbw_gbs * 1e9)


@dataclass(frozen=True, kw_only=True)
class _Links:
    """Bandwidths the collectives see on one candidate."""

    kind: str
    intra_busbw: float
    dp_busbw: float
    nic_gbs: float | None
    notes: tuple[str, ...]


def _links(candidate: Candidate, gpu: GpuSpec | None, per_node: int, nodes: int) -> _Links:
    """Intra-node link kind and bus bandwidth, and the bandwidth data-parallel collectives get across nodes."""
    notes: list[str] = []
    kind = candidate.interconnect
    has_nvlink = gpu is not None and gpu.nvlink_gbs is not None
    if kind == "unknown":
        kind = "nvlink" if gpu is not None and gpu.has_full_nvlink else "pcie"
        notes.append(f"interconnect not stated: {kind} assumed from the GPU's form factor")
    nvlink_gbs = candidate.nvlink_gbs or (gpu.nvlink_gbs if has_nvlink else None)
    if kind == "nvlink" and gpu is not None and gpu.gpu_link == "nvlink-bridge":
        kind = "nvlink-bridge" if per_node <= 2 else "pcie"
        if per_node > 2:
            notes.append("NVLink bridges join pairs only: beyond 2 GPUs traffic crosses PCIe")
    if kind in ("nvlink", "nvlink-bridge") and nvlink_gbs:
        intra = nvlink_gbs * NVLINK_EFFICIENCY
        notes.append(f"NVLink bus bandwidth {NVLINK_EFFICIENCY:.0%} of {nvlink_gbs:g} GB/s per direction (§2.4)")
    else:
        kind = "pcie"
        pcie = gpu.pcie_gbs if gpu is not None and gpu.pcie_gbs else ASSUMED_PCIE_GBS
        if gpu is None or not gpu.pcie_gbs:
            notes.append(f"PCIe bandwidth unknown: Gen4 x16 ({ASSUMED_PCIE_GBS:g} GB/s) assumed")
        intra = pcie * PCIE_EFFICIENCY
        notes.append(f"PCIe bus bandwidth {PCIE_EFFICIENCY:.0%} of {pcie:g} GB/s per direction, GPUs under one "
                     "PCIe switch (across CPU sockets it is lower; check nvidia-smi topo -m)")
    if nodes <= 1:
        return _Links(kind=kind, intra_busbw=intra, dp_busbw=intra, nic_gbs=None, notes=tuple(notes))
    node_gbps = candidate.inter_node_gbps
    if node_gbps is None:
        node_gbps = ASSUMED_NODE_GBPS
        notes.append(f"inter-node fabric unknown: {ASSUMED_NODE_GBPS:g} Gb/s Ethernet per node assumed")
    nic = node_gbps / 8.0 / per_node * NIC_EFFICIENCY
    total = per_node * nodes
    hierarchical = nic * (total - 1) / (nodes - 1)
    notes.append(f"across nodes: {node_gbps:g} Gb/s per node, {NIC_EFFICIENCY:.0%} achievable, hierarchical "
                 "all-reduce busbw = NIC rate per GPU·(n-1)/(k-1) (§2.3)")
    return _Links(kind=kind, intra_busbw=intra, dp_busbw=min(intra, hierarchical), nic_gbs=nic, notes=tuple(notes))


@dataclass(frozen=True, kw_only=True)
class _Plan:
    """A layout to evaluate: estimator settings and the collectives it implies."""

    layout: Layout
    sharding: str
    tp: int


def _plans(total: int, per_node: int, nodes: int, link_kind: str) -> list[_Plan]:
    """Layouts worth trying on this many GPUs; tensor parallel only inside an NVLink node."""
    if total == 1:
        return [_Plan(layout="single_gpu", sharding="none", tp=1)]
    plans = [_Plan(layout="ddp", sharding="ddp", tp=1), _Plan(layout="zero2", sharding="zero2", tp=1),
             _Plan(layout="fsdp", sharding="fsdp", tp=1)]
    if per_node > 1 and link_kind == "nvlink":
        plans.append(_Plan(layout="tensor_parallel", sharding="ddp" if nodes > 1 else "none", tp=per_node))
    return plans


def _memory(workload: Workload, total: int, plan: _Plan) -> float | None:
    """Per-GPU GiB (nvidia-smi view) for a layout; None when the model cannot be split that way. Cached."""
    key = (total, plan.sharding, plan.tp)
    if key not in workload.memory_cache:
        try:
            result: Estimate = estimate(workload.request.model_copy(
                update={"num_gpus": total, "sharding": plan.sharding, "tensor_parallel": plan.tp}))
            workload.memory_cache[key] = result.per_gpu_gib
        except ValueError:
            workload.memory_cache[key] = None
    return workload.memory_cache[key]


def _compute_s(workload: Workload, gpu: GpuSpec | None, tp: int) -> tuple[float | None, Utilisation | None]:
    """Compute seconds per micro-step on each GPU, and the utilisation assumed."""
    if gpu is None:
        return None, None
    peak = peak_tflops(gpu, workload.precision)
    if not peak:
        return None, None
    util = utilisation_for(gpu)
    tokens = workload.micro_batch_size * workload.seq_len
    seconds = tokens * workload.token_flops.total / tp / (peak * 1e12 * util.value)
    if workload.method == "qlora":
        seconds += qlora_dequant_seconds(workload.total_params // tp, gpu,
                                         gradient_checkpointing=workload.gradient_checkpointing)
    return seconds, util


def _comm(workload: Workload, plan: _Plan, links: _Links, total: int, per_node: int,
          nodes: int) -> tuple[float, float, str]:
    """Communication seconds per micro-step, the overlap window as a fraction of compute, and a label."""
    grads = workload.trainable_params * workload.grad_bytes
    backward = backward_fraction(workload.method, workload.gradient_checkpointing)
    if plan.layout == "single_gpu":
        return 0.0, 0.0, "none"
    if plan.layout == "ddp":
        return allreduce_s(grads, total, links.dp_busbw), backward, "all-reduce of gradients"
    if plan.layout == "zero2":
        params = workload.trainable_params * workload.param_bytes
        return (gather_s(grads, total, links.dp_busbw) + gather_s(params, total, links.dp_busbw), backward,
                "reduce-scatter of gradients + all-gather of parameters")
    if plan.layout == "fsdp":
        params = workload.total_params * workload.param_bytes
        return (2 * gather_s(params, total, links.dp_busbw) + gather_s(grads, total, links.dp_busbw), 1.0,
                "all-gather of parameters (forward and backward) + reduce-scatter of gradients")
    activation = workload.micro_batch_size * workload.seq_len * workload.arch.hidden * 2.0
    per_layer = 4 + (2 if workload.gradient_checkpointing else 0)
    tp_s = workload.arch.layers * per_layer * allreduce_s(activation, plan.tp, links.intra_busbw)
    dp_s = allreduce_s(grads / plan.tp, nodes, links.nic_gbs) if nodes > 1 and links.nic_gbs else 0.0
    # Only the cross-node gradient all-reduce can hide behind the backward pass; TP sits on the critical path.
    return tp_s + dp_s, 0.0, "tensor-parallel activation all-reduces" + (
        " + cross-node gradient all-reduce" if dp_s else "")


def _option(workload: Workload, plan: _Plan, per_gpu: float, usable: float, compute: float | None, comm: float,
            window: float, label: str, overlap: bool) -> LayoutOption:
    """Assemble one layout's numbers."""
    exposed = max(comm - window * compute, 0.0) if overlap and compute is not None else comm
    share = comm / (compute + comm) if compute is not None and compute + comm > 0 else None
    exposed_share = exposed / (compute + exposed) if compute is not None and compute + exposed > 0 else None
    return LayoutOption(layout=plan.layout, sharding=plan.sharding, tensor_parallel=plan.tp,
                        per_gpu_gib=per_gpu, fits=per_gpu <= usable, compute_s=compute, comm_s=comm,
                        exposed_comm_s=exposed, comm_share=share, exposed_comm_share=exposed_share,
                        collective=label)


def _step_time(option: LayoutOption) -> float:
    """Seconds per micro-step of a layout (compute plus exposed communication)."""
    return (option.compute_s or 0.0) + option.exposed_comm_s


def _time_per_sequence(option: LayoutOption, total: int) -> float:
    """Seconds per trained sequence across the whole candidate: layouts differ in how many replicas train at once."""
    return _step_time(option) / (total // option.tensor_parallel)


def check_topology(workload: Workload, candidate: Candidate, *, margin: float = DEFAULT_MEMORY_MARGIN,
                   overlap: bool = True) -> TopologyResult:
    """Verdict, layout and communication share for running `workload` on `candidate`."""
    gpu = lookup_gpu(candidate.gpu, candidate.form_factor)
    vram = candidate.vram_gib or (gpu.memory_gib if gpu is not None else None)
    if vram is None:
        raise ValueError(f"unknown GPU '{candidate.gpu}' and no memory size given")
    total = candidate.gpu_count
    per_node = min(candidate.gpus_per_node or total, total)
    if total % per_node:
        raise ValueError(f"{total} GPUs cannot be split into nodes of {per_node}")
    nodes = total // per_node
    links = _links(candidate, gpu, per_node, nodes)
    usable = vram * (1.0 - margin)
    single = _memory(workload, 1, _Plan(layout="single_gpu", sharding="none", tp=1)) or 0.0

    options: list[LayoutOption] = []
    for plan in _plans(total, per_node, nodes, links.kind):
        per_gpu = single if plan.layout == "single_gpu" else _memory(workload, total, plan)
        if per_gpu is None:
            continue
        compute, _ = _compute_s(workload, gpu, plan.tp)
        comm, window, label = _comm(workload, plan, links, total, per_node, nodes)
        options.append(_option(workload, plan, per_gpu, usable, compute, comm, window, label, overlap))
    _, util = _compute_s(workload, gpu, 1)
    fitting = [o for o in options if o.fits]
    best = min(fitting, key=lambda o: _time_per_sequence(o, total)) if fitting else None
    assumptions = [*workload.assumptions, *links.notes,
                   f"memory margin {margin:.0%} of {vram:g} GiB kept free",
                   "one optimizer step per micro-batch (no gradient accumulation): communication is not amortised",
                   "communication overlaps the backward pass (DDP/ZeRO-2) or the whole step (FSDP prefetch); "
                   "tensor-parallel all-reduces do not overlap" if overlap else "no communication overlap"]
    if util is not None:
        assumptions.append(f"compute at {util.value:.0%} of dense peak ({util.source})")
    elif gpu is not None:
        assumptions.append(f"no dense tensor TFLOPS for {gpu.name} in {workload.precision}: times unknown")

    verdict, params = _verdict(best, options, total, nodes, links, vram, usable, single, per_node, workload,
                               candidate)
    return TopologyResult(
        verdict=verdict, runnable=best is not None, params=params, summary=_summary(verdict, params),
        gpu=gpu.name if gpu else candidate.gpu, gpu_count=total, gpus_per_node=per_node, nodes=nodes,
        link=links.kind, link_busbw_gbs=round(links.intra_busbw, 3),
        inter_node_busbw_gbs=round(links.nic_gbs, 3) if links.nic_gbs else None, vram_gib=vram,
        usable_vram_gib=round(usable, 3), memory_margin=margin, fits_on_one_gpu=single <= usable,
        layout=best.layout if best else None, sharding=best.sharding if best else None,
        tensor_parallel=best.tensor_parallel if best else None, per_gpu_gib=best.per_gpu_gib if best else None,
        compute_s_per_step=best.compute_s if best else None, comm_s_per_step=best.comm_s if best else None,
        exposed_comm_s_per_step=best.exposed_comm_s if best else None,
        comm_share=best.comm_share if best else None,
        exposed_comm_share=best.exposed_comm_share if best else None,
        slowdown=(_step_time(best) / best.compute_s) if best and best.compute_s else None,
        utilisation=util.value if util else None, utilisation_source=util.source if util else None,
        options=options, assumptions=assumptions)


def _verdict(best: LayoutOption | None, options: list[LayoutOption], total: int, nodes: int, links: _Links,
             vram: float, usable: float, single: float, per_node: int, workload: Workload,
             candidate: Candidate) -> tuple[VerdictCode, dict[str, float | int | str | bool | None]]:
    """Pick the verdict code and the parameters a sentence about it needs."""
    params: dict[str, float | int | str | bool | None] = {
        "gpu_count": total, "nodes": nodes, "link": links.kind, "vram_gib": vram}
    if best is None:
        smallest = min((o.per_gpu_gib for o in options), default=single)
        params |= {"needed_gib": round(smallest, 2), "usable_gib": round(usable, 2)}
        if links.kind != "nvlink" and per_node > 1:
            tp = _Plan(layout="tensor_parallel", sharding="ddp" if nodes > 1 else "none", tp=per_node)
            tp_memory = _memory(workload, total, tp)
            if tp_memory is not None and tp_memory <= usable:
                params["needed_gib_with_tensor_parallel"] = round(tp_memory, 2)
                return "needs_nvlink_node", params
        return "does_not_fit", params
    share = best.exposed_comm_share
    params |= {"layout": best.layout, "per_gpu_gib": round(best.per_gpu_gib, 2),
               "comm_share": round(best.comm_share, 4) if best.comm_share is not None else None,
               "exposed_comm_share": round(share, 4) if share is not None else None}
    if total == 1:
        return "fits_single_gpu", params
    bound = share is not None and share >= COMM_BOUND_SHARE
    if nodes > 1:
        params["inter_node_gbps"] = candidate.inter_node_gbps or ASSUMED_NODE_GBPS
        params["inter_node_fabric"] = candidate.inter_node_fabric
        return ("multi_node_slow_fabric" if bound else "multi_node_ok"), params
    if bound:
        return ("pcie_comm_bound" if links.kind == "pcie" else "comm_bound"), params
    return "multi_gpu_ok", params


def _summary(verdict: VerdictCode, params: dict[str, float | int | str | bool | None]) -> str:
    """English sentence for a verdict (other languages are written by the agent from code and params)."""
    share = params.get("exposed_comm_share")
    pct = f"{100 * share:.0f} %" if isinstance(share, float) else "an unknown share"
    if verdict == "fits_single_gpu":
        return f"fits on 1 GPU ({params['per_gpu_gib']} of {params['vram_gib']} GiB)"
    if verdict == "does_not_fit":
        return f"does not fit: needs {params['needed_gib']} GiB per GPU, {params['usable_gib']} GiB usable"
    if verdict == "needs_nvlink_node":
        return "needs an NVLink node: only tensor parallelism fits, and it needs NVLink"
    if verdict == "pcie_comm_bound":
        return f"PCIe-only: communication would take {pct} of each step"
    if verdict == "comm_bound":
        return f"communication would take {pct} of each step"
    if verdict == "multi_node_slow_fabric":
        return f"multi-node over {params['inter_node_gbps']:g} Gb/s: communication would take {pct} of each step; not advised"
    if verdict == "multi_node_ok":
        return f"multi-node {params['layout']}: communication {pct} of each step"
    return f"{params['gpu_count']} GPUs, {params['layout']}: communication {pct} of each step"

