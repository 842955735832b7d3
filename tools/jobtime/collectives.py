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


def allreduce_bytes(size_bytes: float, ranks: int) -> float | None:
    """Bytes each rank moves in a ring all-reduce, 2(n-1)/n·S; None when there is no one to talk to."""
    return None if ranks <= 1 else 2.0 * (ranks - 1) / ranks * size_bytes


def gather_bytes(size_bytes: float, ranks: int) -> float | None:
    """Bytes each rank moves in an all-gather or reduce-scatter, (n-1)/n·S; None for one rank."""
    return None if ranks <= 1 else (ranks - 1) / ranks * size_bytes


def over(moved: float | None, busbw_gbs: float) -> float:
    """Seconds to move `moved` bytes at a bus bandwidth of `busbw_gbs` GB/s (0 when nothing moves)."""
    return 0.0 if moved is None else moved / (busbw_gbs * 1e9)


def allreduce_s(size_bytes: float, ranks: int, busbw_gbs: float) -> float:
    """Ring all-reduce lower bound 2(n-1)/n·S/B (hardware.md §2.3)."""
    return over(allreduce_bytes(size_bytes, ranks), busbw_gbs)


def gather_s(size_bytes: float, ranks: int, busbw_gbs: float) -> float:
    """All-gather or reduce-scatter lower bound (n-1)/n·S/B (hardware.md §2.3)."""
    return over(gather_bytes(size_bytes, ranks), busbw_gbs)


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


class Traffic(NamedTuple):
    """What one layout moves on a GPU geometry before any link speed is known: the per-rank bytes of each of its
    collectives (None: that one does not run), in comm_seconds' order, and what can hide them. Computed once per
    job and geometry; the seconds follow per candidate from its links (`comm_on`)."""

    layout: Layout
    first: float | None
    """DDP: gradient all-reduce; ZeRO-2: gradient reduce-scatter; FSDP/HSDP: parameter all-gather (run twice);
    TP: activation all-reduce (run `scale` times)."""
    second: float | None
    """ZeRO-2: parameter all-gather; FSDP/HSDP: gradient reduce-scatter; TP: data-parallel gradient all-reduce."""
    third: float | None
    """HSDP: cross-node all-reduce of gradient shards."""
    scale: float
    """TP: all-reduces per micro-step (layers × per layer)."""
    backward_share: float
    """Share of a step's compute in the backward pass (the window gradient traffic hides in)."""
    label: str
    accumulation: int
    one_group_per_node: bool
    """TP: one tensor-parallel group per node (its gradient all-reduce crosses nodes on the NIC)."""


def traffic(
    workload: Workload, plan: Plan, total: int, nodes: int, *, gradient_checkpointing: bool, micro_batch: int | None
) -> Traffic:
    """The link-independent part of comm_seconds for one layout on `total` GPUs in `nodes` nodes."""
    grads = workload.trainable_params * workload.grad_bytes
    back = backward_fraction(workload.method, gradient_checkpointing)
    replicas = total // plan.tp
    micro = micro_batch or workload.micro_batch_size
    accumulation = workload.accumulation_steps(replicas, micro)
    layout = plan.layout
    if layout == "single_gpu":
        return Traffic(layout, None, None, None, 0.0, back, "none", accumulation, False)
    if layout == "ddp":
        moved = allreduce_bytes(grads, total)
        return Traffic(layout, moved, None, None, 0.0, back, "all-reduce of gradients", accumulation, False)
    if layout == "zero2":
        return Traffic(
            layout,
            gather_bytes(grads, total),
            gather_bytes(workload.trainable_params * workload.param_bytes, total),
            None,
            0.0,
            back,
            "reduce-scatter of gradients + all-gather of parameters",
            accumulation,
            False,
        )
    params = workload.total_params * workload.param_bytes
    if layout == "fsdp":
        return Traffic(
            layout,
            gather_bytes(params, total),
            gather_bytes(grads, total),
            None,
            0.0,
            back,
            "all-gather of parameters (forward and backward) + reduce-scatter of gradients",
            accumulation,
            False,
        )
    if layout == "hsdp":
        # Hybrid sharding: FSDP inside each node, each GPU all-reduces its gradient shard with its peers in the
        # other nodes once per optimizer step (PyTorch HYBRID_SHARD / DeepSpeed hpZ-style).
        per_node = total // nodes
        return Traffic(
            layout,
            gather_bytes(params, per_node),
            gather_bytes(grads, per_node),
            allreduce_bytes(grads / per_node, nodes),
            0.0,
            back,
            "parameter all-gathers inside each node + cross-node all-reduce of gradient shards",
            accumulation,
            False,
        )
    activation = micro * workload.seq_len * workload.arch.hidden * 2.0
    per_layer = 4 + (2 if gradient_checkpointing else 0)
    return Traffic(
        layout,
        allreduce_bytes(activation, plan.tp),
        allreduce_bytes(grads / plan.tp, replicas),
        None,
        workload.arch.layers * per_layer,
        back,
        "tensor-parallel activation all-reduces",
        accumulation,
        nodes > 1 and plan.tp * nodes == total,
    )


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
    moved = traffic(
        workload, plan, total, nodes, gradient_checkpointing=gradient_checkpointing, micro_batch=micro_batch
    )
    return comm_on(moved, links, compute_s, overlap)


def comm_on(moved: Traffic, links: Links, compute_s: float | None, overlap: bool = True) -> Comm:
    """comm_seconds of a layout's traffic on a candidate's links (see comm_seconds for what each layout moves)."""
    compute = compute_s or 0.0
    backward = moved.backward_share * compute
    accumulation, layout = moved.accumulation, moved.layout
    if layout == "single_gpu":
        return Comm(0.0, 0.0, moved.label, accumulation)
    if layout == "ddp":
        once = over(moved.first, links.dp_busbw)
        return Comm(once / accumulation, _exposed(once, backward, overlap) / accumulation, moved.label, accumulation)
    if layout == "zero2":
        every = over(moved.first, links.dp_busbw)
        once = over(moved.second, links.dp_busbw)
        return Comm(
            every + once / accumulation,
            _exposed(every, backward, overlap) + once / accumulation,
            moved.label,
            accumulation,
        )
    if layout == "fsdp":
        every = 2 * over(moved.first, links.dp_busbw) + over(moved.second, links.dp_busbw)
        return Comm(every, _exposed(every, compute, overlap), moved.label, accumulation)
    if layout == "hsdp":
        every = 2 * over(moved.first, links.intra_busbw) + over(moved.second, links.intra_busbw)
        once = over(moved.third, links.nic_gbs or links.dp_busbw)
        return Comm(
            every + once / accumulation,
            _exposed(every, compute, overlap) + _exposed(once, backward, overlap) / accumulation,
            moved.label,
            accumulation,
        )
    tp_s = moved.scale * over(moved.first, links.intra_busbw)
    dp_busbw = links.nic_gbs if moved.one_group_per_node and links.nic_gbs else links.dp_busbw
    dp_once = over(moved.second, dp_busbw)
    # The data-parallel gradient all-reduce would overlap the backward pass, but TP keeps the backward busy: no overlap.
    label = moved.label + (" + data-parallel gradient all-reduce" if dp_once else "")
    return Comm(tp_s + dp_once / accumulation, tp_s + dp_once / accumulation, label, accumulation)
