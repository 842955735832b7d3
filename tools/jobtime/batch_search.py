"""The layout search run over every candidate shape of one GPU geometry at once: a new job's ~280 shapes on ~12
geometries are ~70 layouts as arrays instead of ~1,500 per-shape layout calls (issue 27).

The layouts, their order, the shrinking of the micro-batch and the choice among them are tools.jobtime.layouts'
(`search`, `plan_options`) and topology's `_preferred`; each value comes from the same float operations in the same
order, as numpy arrays over the shapes (row = one layout tried, column = one shape). The per-shape search stays the
reference: tests/test_batch_search.py checks that both list the same layouts and choose the same one, with the same
numbers, bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tools.gpus import GpuSpec
from tools.jobtime.collectives import Links, Plan, Traffic
from tools.jobtime.layouts import (
    COMM_BOUND_SHARE,
    Tried,
    compute,
    data_parallel_plans,
    layout_slot,
    tensor_parallel_plans,
)
from tools.jobtime.workload import Workload

TP_EXTRA_LABEL = " + data-parallel gradient all-reduce"
"""What a tensor-parallel layout's label gains when its gradient all-reduce moves data (collectives.comm_on)."""


class Unbatchable(Exception):
    """A shape whose step compute is unknown: the per-shape search handles it."""


class Steps:
    """Step compute of one workload on each distinct GPU of the shapes searched together, per (tensor parallel,
    checkpointing, micro-batch): shapes and geometries share their GPUs."""

    def __init__(self, workload: Workload, gpus: list[GpuSpec]) -> None:
        self.workload, self.gpus = workload, gpus
        self._found: dict[tuple[int, bool, int], tuple[np.ndarray, np.ndarray]] = {}

    def get(self, tp: int, ckpt: bool, micro: int, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Seconds and utilisation of one micro-step on each GPU, computed for the GPUs `wanted` (NaN for the
        others until they are; Unbatchable when a wanted one is unknown)."""
        key = (tp, ckpt, micro)
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = (np.full(len(self.gpus), np.nan), np.full(len(self.gpus), np.nan))
        seconds, utilisation = found
        for index in np.flatnonzero(wanted & np.isnan(seconds)).tolist():
            step = compute(self.workload, self.gpus[index], tp, ckpt, micro)
            if step is None:
                raise Unbatchable
            seconds[index], utilisation[index] = step.seconds, step.utilisation_value
        return found


@dataclass(slots=True)
class Geometry:
    """The shapes searched together: one GPU count, GPUs per node and node count; per shape its GPU (a row of
    `steps`), links and usable memory."""

    total: int
    per_node: int
    nodes: int
    steps: Steps
    gpu_rows: np.ndarray
    usable: np.ndarray
    dp_bytes: np.ndarray
    """Data-parallel bus bandwidth per shape in bytes/s (`busbw * 1e9`, as collectives.over divides by it)."""
    intra_bytes: np.ndarray
    """Intra-node bus bandwidth per shape in bytes/s."""
    node_bytes: np.ndarray
    """Across nodes per shape in bytes/s: the NIC rate per GPU, or the data-parallel bandwidth without a NIC."""
    nvlink: np.ndarray
    """Whether each shape's intra-node link is NVLink (tensor parallelism is tried only there)."""
    everywhere: dict[tuple[int, bool, int], tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    """`compute` per (tensor parallel, checkpointing, micro-batch) tried on every shape: the data-parallel layouts of
    one setting share it (DDP, ZeRO-2, FSDP and HSDP run the same micro-step)."""

    @classmethod
    def of(
        cls,
        total: int,
        per_node: int,
        nodes: int,
        steps: Steps,
        gpu_rows: list[int],
        links: list[Links],
        usable: list[float],
    ) -> Geometry:
        """The geometry's arrays from per-shape GPU rows, links and usable GiB."""
        return cls(
            total=total,
            per_node=per_node,
            nodes=nodes,
            steps=steps,
            gpu_rows=np.array(gpu_rows, dtype=np.intp),
            usable=np.array(usable, dtype=float),
            dp_bytes=np.array([link.dp_busbw for link in links], dtype=float) * 1e9,
            intra_bytes=np.array([link.intra_busbw for link in links], dtype=float) * 1e9,
            node_bytes=np.array([link.nic_gbs or link.dp_busbw for link in links], dtype=float) * 1e9,
            nvlink=np.array([link.kind == "nvlink" for link in links], dtype=bool),
        )

    def compute(self, tp: int, ckpt: bool, micro: int, tried: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Seconds and utilisation of one micro-step on each shape's GPU, computed where the layout is `tried`
        (the workload keeps every step it computes; NaN elsewhere). The arrays are shared: never changed in place."""
        key = (tp, ckpt, micro)
        found = self.everywhere.get(key)
        if found is not None:
            return found
        wanted = np.zeros(len(self.steps.gpus), dtype=bool)
        wanted[self.gpu_rows[tried]] = True
        whole = bool(tried.all())
        seconds, utilisation = self.steps.get(tp, ckpt, micro, wanted)
        found = seconds[self.gpu_rows], utilisation[self.gpu_rows]
        if whole:
            self.everywhere[key] = found
        return found


@dataclass(slots=True)
class Row:
    """One layout tried on every shape of a geometry: per shape whether it was tried and its numbers."""

    plan: Plan
    ckpt: bool
    label: str
    tried: np.ndarray
    micro: np.ndarray
    per_gpu: np.ndarray
    seconds: np.ndarray
    comm: np.ndarray
    exposed: np.ndarray
    accumulation: np.ndarray
    extra_label: np.ndarray
    """Tensor parallel: whether the label gains TP_EXTRA_LABEL."""
    utilisation: np.ndarray


def _over(moved: float | None, bytes_per_s: np.ndarray) -> np.ndarray:
    """collectives.over on every shape's bandwidth (bytes/s)."""
    return np.zeros(bytes_per_s.shape) if moved is None else moved / bytes_per_s


def _exposed(seconds: np.ndarray, window: np.ndarray, overlap: bool) -> np.ndarray:
    """collectives._exposed: max(seconds - window, 0.0), Python's max (the first argument unless 0.0 is larger)."""
    if not overlap:
        return seconds
    left = seconds - window
    return np.where(left < 0.0, 0.0, left)


def comm_arrays(
    moved: Traffic, geometry: Geometry, seconds: np.ndarray, overlap: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """collectives.comm_on over every shape: (seconds, exposed seconds, whether a TP label gains its extra)."""
    n = len(seconds)
    none = np.zeros(n, dtype=bool)
    backward = moved.backward_share * seconds
    accumulation, layout = moved.accumulation, moved.layout
    dp, intra = geometry.dp_bytes, geometry.intra_bytes
    if layout == "single_gpu":
        return np.zeros(n), np.zeros(n), none
    if layout == "ddp":
        once = _over(moved.first, dp)
        return once / accumulation, _exposed(once, backward, overlap) / accumulation, none
    if layout == "zero2":
        every, once = _over(moved.first, dp), _over(moved.second, dp)
        return every + once / accumulation, _exposed(every, backward, overlap) + once / accumulation, none
    if layout == "fsdp":
        every = 2 * _over(moved.first, dp) + _over(moved.second, dp)
        return every, _exposed(every, seconds, overlap), none
    nic_or_dp = geometry.node_bytes
    if layout == "hsdp":
        every = 2 * _over(moved.first, intra) + _over(moved.second, intra)
        once = _over(moved.third, nic_or_dp)
        return (
            every + once / accumulation,
            _exposed(every, seconds, overlap) + _exposed(once, backward, overlap) / accumulation,
            none,
        )
    tp_s = moved.scale * _over(moved.first, intra)
    dp_once = _over(moved.second, nic_or_dp if moved.one_group_per_node else dp)
    both = tp_s + dp_once / accumulation
    return both, both, dp_once != 0.0


class Search:
    """The layout search of one workload on one geometry (`rows` in the per-shape search's order)."""

    def __init__(self, workload: Workload, geometry: Geometry, overlap: bool) -> None:
        self.workload, self.geometry, self.overlap = workload, geometry, overlap
        self.n = len(geometry.usable)
        self.rows: list[Row] = []

    def row(self, plan: Plan, ckpt: bool, micro: int, tried: np.ndarray) -> Row | None:
        """The layout at one checkpointing setting and micro-batch on every shape (None when the model cannot be
        split that way)."""
        geometry = self.geometry
        slot = layout_slot(self.workload, plan, geometry.total, geometry.nodes, ckpt, micro)
        if slot is None:
            return None
        per_gpu, moved = slot
        seconds, utilisation = geometry.compute(plan.tp, ckpt, micro, tried)
        comm, exposed, extra = comm_arrays(moved, geometry, seconds, self.overlap)
        return Row(
            plan=plan,
            ckpt=ckpt,
            label=moved.label,
            tried=tried,
            micro=np.full(self.n, micro),
            per_gpu=np.full(self.n, per_gpu),
            seconds=seconds,
            comm=comm,
            exposed=exposed,
            accumulation=np.full(self.n, moved.accumulation),
            extra_label=extra,
            utilisation=utilisation,
        )

    def plan(self, plan: Plan, enabled: np.ndarray) -> None:
        """layouts.plan_options on the shapes `enabled`: the stated micro-batch, then (where none fits) each
        checkpointing setting at the largest smaller micro-batch that fits (or 1)."""
        workload, usable = self.workload, self.geometry.usable
        stated = [
            found
            for ckpt in workload.checkpointing_variants
            if (found := self.row(plan, ckpt, workload.micro_batch_size, enabled)) is not None
        ]
        if not stated:
            return
        self.rows.extend(stated)
        shrink = enabled & ~np.logical_or.reduce([found.per_gpu <= usable for found in stated])
        if not shrink.any():
            return
        for ckpt in workload.checkpointing_variants:
            self._shrunk(plan, ckpt, shrink)

    def _shrunk(self, plan: Plan, ckpt: bool, shrink: np.ndarray) -> None:
        """Per shape in `shrink`, the first smaller micro-batch whose layout fits (or micro-batch 1), as one row."""
        usable, left = self.geometry.usable, shrink.copy()
        picked: Row | None = None
        geometry = self.geometry
        for micro in self.workload.smaller_micro_batches:
            slot = layout_slot(self.workload, plan, geometry.total, geometry.nodes, ckpt, micro)
            if slot is None:
                continue
            take = left & ((slot[0] <= usable) | (micro == 1))
            if not take.any():
                continue
            found = self.row(plan, ckpt, micro, take)
            assert found is not None  # the same slot
            picked = found if picked is None else _merged(picked, found, take)
            left = left & ~take
            if not left.any():
                break
        if picked is not None:
            picked.tried = shrink & ~left
            self.rows.append(picked)

    def run(self) -> Search:
        """Every layout tried, data-parallel first; tensor-parallel ones where sharding cannot fit or scale."""
        geometry, workload = self.geometry, self.workload
        everywhere = np.ones(self.n, dtype=bool)
        for plan in data_parallel_plans(geometry.total, geometry.per_node, geometry.nodes):
            self.plan(plan, everywhere)
        fastest = self.fastest(self.rows)
        fits = fastest >= 0
        best_share = np.zeros(self.n)
        if fits.any():
            index = np.arange(self.n)
            seconds = self._stack("seconds")[fastest, index]
            exposed = self._stack("exposed")[fastest, index]
            hidden = seconds + exposed
            best_share = np.where(hidden > 0, exposed / np.where(hidden > 0, hidden, 1.0), 0.0)
        too_many_replicas = geometry.total > workload.global_batch_sequences()
        wanted = ~fits | too_many_replicas | (fits & (best_share >= COMM_BOUND_SHARE))
        wanted &= geometry.nvlink
        if wanted.any():
            for plan in tensor_parallel_plans(workload, geometry.per_node, geometry.nodes, "nvlink"):
                self.plan(plan, wanted)
        return self

    def _stack(self, name: str, rows: list[Row] | None = None) -> np.ndarray:
        """One field of the rows as a (rows, shapes) array."""
        return np.array([getattr(found, name) for found in (self.rows if rows is None else rows)])

    def _per_token(self, rows: list[Row]) -> np.ndarray:
        """layouts.time_per_token of each row on each shape, inf where it was not tried or does not fit."""
        if not rows:
            return np.full((0, self.n), np.inf)
        geometry, seq = self.geometry, self.workload.seq_len
        replicas = np.array([[geometry.total // found.plan.tp] for found in rows])
        step = self._stack("seconds", rows) + self._stack("exposed", rows)
        per_token = step / (replicas * self._stack("micro", rows) * seq)
        fitting = self._stack("tried", rows) & (self._stack("per_gpu", rows) <= geometry.usable)
        return np.where(fitting, per_token, np.inf)

    def fastest(self, rows: list[Row]) -> np.ndarray:
        """Per shape the index of its fastest fitting row (the first of equals), -1 where none fits."""
        per_token = self._per_token(rows)
        if not len(per_token):
            return np.full(self.n, -1)
        return np.where(np.isfinite(per_token.min(axis=0)), per_token.argmin(axis=0), -1)

    def preferred(self, tolerance: float) -> np.ndarray:
        """topology._preferred per shape: the first fitting row within `tolerance` of the fastest, -1 where none."""
        per_token = self._per_token(self.rows)
        if not len(per_token):
            return np.full(self.n, -1)
        least = per_token.min(axis=0)
        within = least * (1 + tolerance)
        first: np.ndarray = (per_token <= within).argmax(axis=0)
        return np.where(np.isfinite(least), first, -1)

    def smallest(self) -> np.ndarray:
        """Per shape the least per-GPU GiB over the layouts tried (inf where none was)."""
        if not self.rows:
            return np.full(self.n, np.inf)
        least: np.ndarray = np.where(self._stack("tried"), self._stack("per_gpu"), np.inf).min(axis=0)
        return least

    def options(self, shape: int) -> list[Tried]:
        """Every layout tried on one shape, in the per-shape search's order."""
        return [self.tried(row, shape) for row, found in enumerate(self.rows) if found.tried[shape]]

    def tried(self, row: int, shape: int) -> Tried:
        """The per-shape search's Tried for one row on one shape (shares as layouts._option computes them)."""
        found = self.rows[row]
        seconds, comm, exposed = (
            float(found.seconds[shape]),
            float(found.comm[shape]),
            float(found.exposed[shape]),
        )
        per_gpu = float(found.per_gpu[shape])
        both, hidden = seconds + comm, seconds + exposed
        label = found.label + (TP_EXTRA_LABEL if found.extra_label[shape] else "")
        return Tried._make(
            (
                found.plan.layout,
                found.plan.sharding,
                found.plan.tp,
                per_gpu,
                per_gpu <= float(self.geometry.usable[shape]),
                seconds,
                comm,
                exposed,
                comm / both if both > 0 else None,
                exposed / hidden if hidden > 0 else None,
                label,
                found.ckpt,
                int(found.accumulation[shape]),
                int(found.micro[shape]),
                float(found.utilisation[shape]),
            )
        )


def _merged(first: Row, second: Row, take: np.ndarray) -> Row:
    """Row `first` with the shapes in `take` taken from `second` (the same layout at another micro-batch)."""
    return Row(
        plan=first.plan,
        ckpt=first.ckpt,
        label=first.label,
        tried=first.tried,
        micro=np.where(take, second.micro, first.micro),
        per_gpu=np.where(take, second.per_gpu, first.per_gpu),
        seconds=np.where(take, second.seconds, first.seconds),
        comm=np.where(take, second.comm, first.comm),
        exposed=np.where(take, second.exposed, first.exposed),
        accumulation=np.where(take, second.accumulation, first.accumulation),
        extra_label=np.where(take, second.extra_label, first.extra_label),
        utilisation=np.where(take, second.utilisation, first.utilisation),
    )
