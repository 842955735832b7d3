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
from typing import NamedTuple, Protocol

from tools.gpus import GpuSpec, lookup_gpu
from tools.jobtime.candidate import Candidate, Interconnect, TopologyResult  # noqa: F401  (re-exported)
from tools.jobtime.collectives import (  # noqa: F401  (re-exported: the link model's constants and cost functions)
    ASSUMED_NODE_GBPS,
    ASSUMED_PCIE_GBS,
    NIC_EFFICIENCY,
    NVLINK_EFFICIENCY,
    PCIE_EFFICIENCY,
    Layout,
    Links,
    Plan,
    allreduce_s,
    comm_seconds,
    gather_s,
    links_for,
)
from tools.jobtime.layouts import (
    LayoutOption,
    Tried,
    compute,
    memory_gib,
    plan_options,
    search,
    step_time,
    trusted,
)
from tools.jobtime.layouts import time_per_token as _time_per_token
from tools.jobtime.verdicts import VerdictCode, summary_of, verdict_code, verdict_params
from tools.jobtime.workload import Workload, build_workload  # noqa: F401  (re-exported)
from tools.memory import FIT_MARGIN

PREFERENCE_TOLERANCE = 0.03
"""Layouts within 3 % of the fastest count as a tie; the simpler one (earlier in the search order) is chosen."""
DEFAULT_MEMORY_MARGIN = FIT_MARGIN
"""Fraction of each GPU's memory kept free on top of the estimate: the one fit threshold (tools.memory.peak)."""
GIB = 1024**3


def _shape(candidate: Candidate) -> tuple[GpuSpec | None, float, int, int, int]:
    """The candidate's GPU spec, memory per GPU, GPU count, GPUs per node and nodes (ValueError when unusable)."""
    gpu = lookup_gpu(candidate.gpu, candidate.form_factor)
    vram = candidate.vram_gib or (gpu.memory_gib if gpu is not None else None)
    if vram is None:
        raise ValueError(f"unknown GPU '{candidate.gpu}' and no memory size given")
    total = candidate.gpu_count
    per_node = min(candidate.gpus_per_node or total, total)
    if total % per_node:
        raise ValueError(f"{total} GPUs cannot be split into nodes of {per_node}")
    return gpu, vram, total, per_node, total // per_node


class Hardware(NamedTuple):
    """What the search reads from a candidate: its GPU spec, memory per GPU, GPU count, GPUs per node, nodes and
    links (the same for every job, so the ranking keeps it per hardware shape)."""

    gpu: GpuSpec | None
    vram: float
    total: int
    per_node: int
    nodes: int
    links: Links


def hardware_of(candidate: Candidate) -> Hardware:
    """The candidate's hardware as the search sees it (ValueError when unusable)."""
    gpu, vram, total, per_node, nodes = _shape(candidate)
    return Hardware(gpu, vram, total, per_node, nodes, links_for(candidate, gpu, per_node, nodes))


def evaluate_plan(
    workload: Workload, candidate: Candidate, plan: Plan, *, margin: float = DEFAULT_MEMORY_MARGIN, overlap: bool = True
) -> list[LayoutOption]:
    """One named layout at the stated micro-batch, fitting or not (the throughput eval times published layouts)."""
    gpu, vram, total, per_node, nodes = _shape(candidate)
    links = links_for(candidate, gpu, per_node, nodes)
    usable = vram * (1.0 - margin)
    return [o.option() for o in plan_options(workload, gpu, plan, links, total, nodes, usable, overlap, shrink=False)]


def _preferred(fitting: list[Tried], total: int, seq_len: int) -> Tried | None:
    """The simplest layout (search order: DDP, ZeRO-2, FSDP, HSDP, then tensor parallel) within
    PREFERENCE_TOLERANCE of the fastest time per token."""
    if not fitting:
        return None
    times = [_time_per_token(o, total, seq_len) for o in fitting]
    within = min(times) * (1 + PREFERENCE_TOLERANCE)
    return next(o for o, seconds in zip(fitting, times) if seconds <= within)


SINGLE_GPU = Plan(layout="single_gpu", sharding="none", tp=1)


class Listing(Protocol):
    """A search over many shapes at once that lists one shape's layouts on demand (tools.jobtime.batch.search)."""

    def options(self, shape: int) -> list[Tried]:
        """Every layout tried on the shape in column `shape`, in the per-shape search's order."""
        ...


@dataclass(slots=True, kw_only=True, eq=False)
class Assessment:
    """The layout search on one candidate and its verdict, before it is explained: the ranking assesses every
    candidate shape of a job (~280 for a new one) and explains only the plans it shows (`result`). The attributes
    the ranking reads have TopologyResult's names and values."""

    workload: Workload
    candidate: Candidate
    margin: float
    overlap: bool
    gpu: GpuSpec | None
    vram: float
    gpu_count: int
    per_node: int
    nodes: int
    links: Links
    usable: float
    single: float
    """Per-GPU GiB of the job on one GPU."""
    searched: list[Tried] | Listing
    """Every layout tried, or the search that lists them on first use as its `column` (the search over many shapes at
    once keeps its arrays, tools.jobtime.batch.search, and builds a shape's list only where its topology is
    explained)."""
    best: Tried | None
    smallest: float
    """The least per-GPU GiB of the layouts tried (`single` when none was)."""
    verdict: VerdictCode
    column: int = 0
    """The shape's column in a `Listing` search."""
    _params: dict[str, float | int | str | bool | None] | None = field(default=None, init=False)
    _result: TopologyResult | None = field(default=None, init=False)

    @property
    def params(self) -> dict[str, float | int | str | bool | None]:
        """The numbers a sentence about the verdict needs (built on first use: most shapes are never explained)."""
        if self._params is None:
            self._params = verdict_params(self)
        return self._params

    @property
    def options(self) -> list[Tried]:
        """Every layout tried, in the search's order."""
        searched = self.searched
        if not isinstance(searched, list):
            searched = self.searched = searched.options(self.column)
        return searched

    @property
    def runnable(self) -> bool:
        """Whether some layout fits."""
        return self.best is not None

    @property
    def layout(self) -> Layout | None:
        """The chosen layout."""
        return self.best.layout if self.best else None

    @property
    def per_gpu_gib(self) -> float | None:
        """Per-GPU GiB of the chosen layout."""
        return self.best.per_gpu_gib if self.best else None

    @property
    def tensor_parallel(self) -> int | None:
        """Tensor-parallel degree of the chosen layout."""
        return self.best.tensor_parallel if self.best else None

    @property
    def micro_batch_size(self) -> int | None:
        """Sequences per GPU per micro-step in the chosen layout."""
        return self.best.micro_batch_size if self.best else None

    @property
    def sharding(self) -> str | None:
        """Sharding of the chosen layout."""
        return self.best.sharding if self.best else None

    @property
    def gradient_checkpointing(self) -> bool | None:
        """Whether the chosen layout recomputes activations."""
        return self.best.gradient_checkpointing if self.best else None

    @property
    def gradient_accumulation_steps(self) -> int | None:
        """Micro-steps per optimizer step in the chosen layout."""
        return self.best.gradient_accumulation_steps if self.best else None

    @property
    def exposed_comm_share(self) -> float | None:
        """Share of the chosen layout's step spent in communication left after overlap."""
        return self.best.exposed_comm_share if self.best else None

    @property
    def summary(self) -> str:
        """The verdict's English one-liner (TopologyResult.summary)."""
        return summary_of(self.verdict, self.params)

    @property
    def compute_s_per_step(self) -> float | None:
        """Compute seconds per micro-step of the chosen layout."""
        return self.best.compute_s if self.best else None

    @property
    def exposed_comm_s_per_step(self) -> float | None:
        """Communication seconds per micro-step left after overlap, in the chosen layout."""
        return self.best.exposed_comm_s if self.best else None

    def result(self) -> TopologyResult:
        """The explained topology result (built once)."""
        if self._result is None:
            self._result = _explained(self)
        return self._result


def assess(
    workload: Workload,
    candidate: Candidate,
    *,
    margin: float = DEFAULT_MEMORY_MARGIN,
    overlap: bool = True,
    hardware: Hardware | None = None,
) -> Assessment:
    """The layout search and verdict for running `workload` on `candidate` (ValueError when the candidate is
    inconsistent; `hardware`: hardware_of(candidate), when the caller keeps it); check_topology explains it."""
    gpu, vram, total, per_node, nodes, links = hardware or hardware_of(candidate)
    usable = vram * (1.0 - margin)
    single = memory_gib(workload, 1, SINGLE_GPU, workload.gradient_checkpointing, workload.micro_batch_size) or 0.0
    options = search(workload, gpu, links, total, per_node, nodes, usable, overlap)
    best = _preferred([o for o in options if o.fits], total, workload.seq_len)
    smallest = min((o.per_gpu_gib for o in options), default=single)
    verdict = verdict_code(best, total, nodes, links, usable, per_node, workload)
    return Assessment(
        workload=workload,
        candidate=candidate,
        margin=margin,
        overlap=overlap,
        gpu=gpu,
        vram=vram,
        gpu_count=total,
        per_node=per_node,
        nodes=nodes,
        links=links,
        usable=usable,
        single=single,
        searched=options,
        best=best,
        smallest=smallest,
        verdict=verdict,
    )


def check_topology(
    workload: Workload, candidate: Candidate, *, margin: float = DEFAULT_MEMORY_MARGIN, overlap: bool = True
) -> TopologyResult:
    """Verdict, layout and communication share for running `workload` on `candidate`."""
    return assess(workload, candidate, margin=margin, overlap=overlap).result()


def _explained(found: Assessment) -> TopologyResult:
    """The TopologyResult of an assessment: its numbers, the utilisation and the assumptions behind them."""
    workload, candidate, gpu, best, links = found.workload, found.candidate, found.gpu, found.best, found.links
    margin, vram, usable = found.margin, found.vram, found.usable
    util = compute(
        workload,
        gpu,
        best.tensor_parallel if best else 1,
        best.gradient_checkpointing if best else workload.gradient_checkpointing,
        best.micro_batch_size if best else None,
    )
    assumptions = [
        *workload.assumptions,
        *links.notes,
        f"memory margin {margin:.0%} of {vram:g} GiB kept free",
        "gradient accumulation up to the global batch (1M tokens pre-training, 128 sequences "
        "fine-tuning): gradient all-reduces amortised over its micro-steps, FSDP gathers every micro-step",
        "communication overlaps the backward pass (DDP/ZeRO-2) or the whole step (FSDP prefetch); "
        "tensor-parallel all-reduces do not overlap"
        if found.overlap
        else "no communication overlap",
    ]
    if best is not None and workload.checkpointing_optional and not best.gradient_checkpointing:
        assumptions.append(
            "gradient checkpointing left off: the memory allows it, and recompute costs ~1/3 more compute"
        )
    if best is not None and best.micro_batch_size < workload.micro_batch_size:
        assumptions.append(
            f"micro-batch {best.micro_batch_size} instead of {workload.micro_batch_size}: the stated "
            "one does not fit this layout; gradient accumulation keeps the same global batch"
        )
    if util is not None:
        assumptions.append(f"compute at {util.utilisation.value:.0%} of dense peak ({util.utilisation.source})")
    elif gpu is not None:
        assumptions.append(f"no dense tensor TFLOPS for {gpu.name} in {workload.precision}: times unknown")
    # built without validation: each value is cast to its field's type
    return trusted(
        TopologyResult,
        dict(
            verdict=found.verdict,
            runnable=best is not None,
            params=found.params,
            summary=summary_of(found.verdict, found.params),
            gpu=gpu.name if gpu else candidate.gpu,
            gpu_count=int(found.gpu_count),
            gpus_per_node=int(found.per_node),
            nodes=int(found.nodes),
            link=str(links.kind),
            link_busbw_gbs=float(round(links.intra_busbw, 3)),
            inter_node_busbw_gbs=float(round(links.nic_gbs, 3)) if links.nic_gbs else None,
            vram_gib=float(vram),
            usable_vram_gib=float(round(usable, 3)),
            memory_margin=float(margin),
            fits_on_one_gpu=bool(found.single <= usable),
            layout=best.layout if best else None,
            sharding=best.sharding if best else None,
            tensor_parallel=best.tensor_parallel if best else None,
            per_gpu_gib=best.per_gpu_gib if best else None,
            compute_s_per_step=best.compute_s if best else None,
            comm_s_per_step=best.comm_s if best else None,
            exposed_comm_s_per_step=best.exposed_comm_s if best else None,
            comm_share=best.comm_share if best else None,
            exposed_comm_share=best.exposed_comm_share if best else None,
            gradient_checkpointing=best.gradient_checkpointing if best else None,
            gradient_accumulation_steps=best.gradient_accumulation_steps if best else None,
            micro_batch_size=best.micro_batch_size if best else None,
            slowdown=float(step_time(best) / best.compute_s) if best and best.compute_s else None,
            utilisation=_real(util.utilisation.value) if util else None,
            utilisation_source=util.utilisation.source if util else None,
            options=[o.option() for o in found.options],
            assumptions=[str(item) for item in assumptions],
        ),
    )


def _real(value: float | None) -> float | None:
    """A float field's value as pydantic would store it (ints become floats)."""
    return None if value is None else float(value)
