"""Collective communication on a set of GPUs: link bandwidths inside and between nodes, NCCL's cost model for
all-reduce, all-gather and reduce-scatter (hardware.md §2.3), and the layouts worth trying with the traffic each
implies per micro-step. Data-parallel gradient traffic happens once per optimizer step, so it is spread over the
micro-steps of gradient accumulation; FSDP's parameter all-gathers happen every micro-step."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple, Protocol

from tools.gpus import GpuSpec
from tools.jobtime.throughput import backward_fraction
from tools.jobtime.workload import Workload

Layout = Literal["single_gpu", "ddp", "zero2", "fsdp", "hsdp", "tensor_parallel"]

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


class LinkFacts(Protocol):
    """What the link model reads from a candidate (tools.jobtime.topology.Candidate)."""

    @property
    def interconnect(self) -> str: ...
    @property
    def nvlink_gbs(self) -> float | None: ...
    @property
    def inter_node_gbps(self) -> float | None: ...


def allreduce_s(size_bytes: float, ranks: int, busbw_gbs: float) -> float:
    """Ring all-reduce lower bound 2(n-1)/n·S/B (hardware.md §2.3)."""
    return 0.0 if ranks <= 1 else 2.0 * (ranks - 1) / ranks * size_bytes / (busbw_gbs * 1e9)


def gather_s(size_bytes: float, ranks: int, busbw_gbs: float) -> float:
    """All-gather or reduce-scatter lower bound (n-1)/n·S/B (hardware.md §2.3)."""
    return 0.0 if ranks <= 1 else (ranks - 1) / ranks * size_bytes / (busbw_gbs * 1e9)


@dataclass(frozen=True, kw_only=True)
class Links:
    """Bandwidths the collectives see on one candidate."""

    kind: str
    intra_busbw: float
    dp_busbw: float
    nic_gbs: float | None
    notes: tuple[str, ...]


def links_for(candidate: LinkFacts, gpu: GpuSpec | None, per_node: int, nodes: int) -> Links:
    """Intra-node link kind and bus bandwidth, and the bandwidth data-parallel collectives get across nodes."""
    notes: list[str] = []
    kind = candidate.interconnect
    has_nvlink = gpu is not None and gpu.nvlink_gbs is not None
    if kind == "unknown":
        kind = "nvlink" if gpu is not None and gpu.has_full_nvlink else "pcie"
        notes.append(f"interconnect not stated: {kind} assumed from the GPU's form factor")
    nvlink_gbs = candidate.nvlink_gbs or (gpu.nvlink_gbs if has_nvlink and gpu is not None else None)
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
        notes.append(
            f"PCIe bus bandwidth {PCIE_EFFICIENCY:.0%} of {pcie:g} GB/s per direction, GPUs under one "
            "PCIe switch (across CPU sockets it is lower; check nvidia-smi topo -m)"
        )
    if nodes <= 1:
        return Links(kind=kind, intra_busbw=intra, dp_busbw=intra, nic_gbs=None, notes=tuple(notes))
    node_gbps = candidate.inter_node_gbps
    if node_gbps is None:
        node_gbps = ASSUMED_NODE_GBPS
        notes.append(f"inter-node fabric unknown: {ASSUMED_NODE_GBPS:g} Gb/s Ethernet per node assumed")
    nic = node_gbps / 8.0 / per_node * NIC_EFFICIENCY
    total = per_node * nodes
    hierarchical = nic * (total - 1) / (nodes - 1)
    notes.append(
        f"across nodes: {node_gbps:g} Gb/s per node, {NIC_EFFICIENCY:.0%} achievable, hierarchical "
        "all-reduce busbw = NIC rate per GPU·(n-1)/(k-1) (§2.3)"
    )
    return Links(kind=kind, intra_busbw=intra, dp_busbw=min(intra, hierarchical), nic_gbs=nic, notes=tuple(notes))


@dataclass(frozen=True, kw_only=True)
class Plan:
    """A layout to evaluate: estimator settings and the collectives it implies."""

    layout: Layout
    sharding: str
    tp: int


class Comm(NamedTuple):
    """Communication of one layout, averaged per micro-step, and what is left after overlapping with compute (a
    tuple: the layout search builds one per layout tried, ~1,500 per new job)."""

    seconds: float
    exposed: float
    label: str
    accumulation: int


def _exposed(seconds: float, window_s: float, overlap: bool) -> float:
    """Communication not hidden behind the compute window (all of it without overlap)."""
    return max(seconds - window_s, 0.0) if overlap else seconds


def comm_seconds(
    workload: Workload,
    plan: Plan,
    links: Links,
    total: int,
    nodes: int,
    *,
    compute_s: float | None,
    gradient_checkpointing: bool,
    overlap: bool = True,
    micro_batch: int | None = None,
) -> Comm:
    """Communication per micro-step. DDP all-reduces gradients once per optimizer step (no_sync during gradient
    accumulation); ZeRO-2 reduce-scatters gradients every micro-step and all-gathers updated parameters once per
    optimizer step; FSDP all-gathers parameters in forward and backward and reduce-scatters gradients every
    micro-step; tensor parallelism all-reduces activations in every layer (never hidden) and, across nodes,
    all-reduces gradients once per optimizer step. Overlap: gradient traffic hides behind the backward pass,
    FSDP's behind the whole step."""
    grads = workload.trainable_params * workload.grad_bytes
    compute = compute_s or 0.0
    backward = backward_fraction(workload.method, gradient_checkpointing) * compute
    replicas = total // plan.tp
    micro = micro_batch or workload.micro_batch_size
    accumulation = workload.accumulation_steps(replicas, micro)
    if plan.layout == "single_gpu":
        return Comm(seconds=0.0, exposed=0.0, label="none", accumulation=accumulation)
    if plan.layout == "ddp":
        once = allreduce_s(grads, total, links.dp_busbw)
        return Comm(
            seconds=once / accumulation,
            exposed=_exposed(once, backward, overlap) / accumulation,
            label="all-reduce of gradients",
            accumulation=accumulation,
        )
    if plan.layout == "zero2":
        every = gather_s(grads, total, links.dp_busbw)
        once = gather_s(workload.trainable_params * workload.param_bytes, total, links.dp_busbw)
        return Comm(
            seconds=every + once / accumulation,
            exposed=_exposed(every, backward, overlap) + once / accumulation,
            label="reduce-scatter of gradients + all-gather of parameters",
            accumulation=accumulation,
        )
    if plan.layout == "fsdp":
        params = workload.total_params * workload.param_bytes
        every = 2 * gather_s(params, total, links.dp_busbw) + gather_s(grads, total, links.dp_busbw)
        return Comm(
            seconds=every,
            exposed=_exposed(every, compute, overlap),
            label="all-gather of parameters (forward and backward) + reduce-scatter of gradients",
            accumulation=accumulation,
        )
    if plan.layout == "hsdp":
        # Hybrid sharding: FSDP inside each node, each GPU all-reduces its gradient shard with its peers in the
        # other nodes once per optimizer step (PyTorch HYBRID_SHARD / DeepSpeed hpZ-style).
        per_node = total // nodes
        params = workload.total_params * workload.param_bytes
        every = 2 * gather_s(params, per_node, links.intra_busbw) + gather_s(grads, per_node, links.intra_busbw)
        once = allreduce_s(grads / per_node, nodes, links.nic_gbs or links.dp_busbw)
        return Comm(
            seconds=every + once / accumulation,
            exposed=_exposed(every, compute, overlap) + _exposed(once, backward, overlap) / accumulation,
            label="parameter all-gathers inside each node + cross-node all-reduce of gradient shards",
            accumulation=accumulation,
        )
    activation = micro * workload.seq_len * workload.arch.hidden * 2.0
    per_layer = 4 + (2 if gradient_checkpointing else 0)
    tp_s = workload.arch.layers * per_layer * allreduce_s(activation, plan.tp, links.intra_busbw)
    one_group_per_node = nodes > 1 and plan.tp * nodes == total and links.nic_gbs
    dp_busbw = links.nic_gbs if one_group_per_node and links.nic_gbs else links.dp_busbw
    dp_once = allreduce_s(grads / plan.tp, replicas, dp_busbw) if replicas > 1 else 0.0
    # The data-parallel gradient all-reduce would overlap the backward pass, but TP keeps the backward busy: no overlap.
    return Comm(
        seconds=tp_s + dp_once / accumulation,
        exposed=tp_s + dp_once / accumulation,
        label="tensor-parallel activation all-reduces" + (" + data-parallel gradient all-reduce" if dp_once else ""),
        accumulation=accumulation,
    )
