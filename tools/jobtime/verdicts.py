"""The topology verdict of a layout search: which code a candidate gets (fits on one GPU, runs across nodes, bound by
communication, needs an NVLink node, does not fit), the numbers a sentence about it needs, and its English line."""

from __future__ import annotations

from typing import Literal, Protocol

from tools.jobtime.collectives import ASSUMED_NODE_GBPS, Links, Plan
from tools.jobtime.layouts import COMM_BOUND_SHARE, Tried, memory_gib
from tools.jobtime.workload import Workload

VerdictCode = Literal[
    "fits_single_gpu",
    "multi_gpu_ok",
    "multi_node_ok",
    "pcie_comm_bound",
    "comm_bound",
    "multi_node_slow_fabric",
    "needs_nvlink_node",
    "does_not_fit",
]


class FabricFacts(Protocol):
    """What a verdict reads from a candidate (tools.jobtime.topology.Candidate): its stated inter-node network."""

    @property
    def inter_node_gbps(self) -> float | None: ...
    @property
    def inter_node_fabric(self) -> str | None: ...


def verdict_code(
    best: Tried | None, total: int, nodes: int, links: Links, usable: float, per_node: int, workload: Workload
) -> VerdictCode:
    """The verdict code of a layout search (`best`: its chosen layout, None when none fits)."""
    if best is None:
        return (
            "needs_nvlink_node" if nvlink_only_gib(total, nodes, links, usable, per_node, workload) else "does_not_fit"
        )
    if total == 1:
        return "fits_single_gpu"
    share = best.exposed_comm_share
    bound = share is not None and share >= COMM_BOUND_SHARE
    if nodes > 1:
        return "multi_node_slow_fabric" if bound else "multi_node_ok"
    if bound:
        return "pcie_comm_bound" if links.kind == "pcie" else "comm_bound"
    return "multi_gpu_ok"


class Searched(Protocol):
    """What `verdict_params` reads from a layout search and its candidate (tools.jobtime.topology.Assessment)."""

    verdict: VerdictCode
    best: Tried | None
    smallest: float
    """The least per-GPU GiB of the layouts tried (the one-GPU figure when none was)."""
    gpu_count: int
    nodes: int
    links: Links
    vram: float
    usable: float
    per_node: int
    workload: Workload

    @property
    def candidate(self) -> FabricFacts: ...


def verdict_params(found: Searched) -> dict[str, float | int | str | bool | None]:
    """The parameters a sentence about a search's verdict needs; built only where a verdict is explained."""
    best, total, nodes, links, usable = found.best, found.gpu_count, found.nodes, found.links, found.usable
    params: dict[str, float | int | str | bool | None] = {
        "gpu_count": total,
        "nodes": nodes,
        "link": links.kind,
        "vram_gib": found.vram,
    }
    if best is None:
        params |= {"needed_gib": round(found.smallest, 2), "usable_gib": round(usable, 2)}
        tp_gib = (
            nvlink_only_gib(total, nodes, links, usable, found.per_node, found.workload)
            if found.verdict == "needs_nvlink_node"
            else None
        )
        if tp_gib is not None:
            params["needed_gib_with_tensor_parallel"] = round(tp_gib, 2)
        return params
    share = best.exposed_comm_share
    params |= {
        "layout": best.layout,
        "per_gpu_gib": round(best.per_gpu_gib, 2),
        "comm_share": round(best.comm_share, 4) if best.comm_share is not None else None,
        "exposed_comm_share": round(share, 4) if share is not None else None,
    }
    if total != 1 and nodes > 1:
        candidate = found.candidate
        params["inter_node_gbps"] = candidate.inter_node_gbps or ASSUMED_NODE_GBPS
        params["inter_node_fabric"] = candidate.inter_node_fabric
        params["inter_node_assumed"] = not candidate.inter_node_gbps  # no cluster network stated for the instance
    return params


def nvlink_only_gib(
    total: int, nodes: int, links: Links, usable: float, per_node: int, workload: Workload
) -> float | None:
    """Where no layout fits on a node without NVLink: the per-GPU GiB of tensor parallelism across the node when
    that would fit (it needs NVLink), else None."""
    if links.kind == "nvlink" or per_node <= 1:
        return None
    tp = Plan(layout="tensor_parallel", sharding="ddp" if nodes > 1 else "none", tp=per_node)
    tp_memory = memory_gib(workload, total, tp, workload.gradient_checkpointing, workload.micro_batch_size)
    return tp_memory if tp_memory is not None and tp_memory <= usable else None


def summary_of(verdict: VerdictCode, params: dict[str, float | int | str | bool | None]) -> str:
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
