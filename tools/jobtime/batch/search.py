"""The layout search run over every candidate shape of a job at once: a new job's ~280 shapes on ~12 GPU geometries
are ~15 rows of arrays instead of ~1,500 per-shape layout calls (or ~70 rows, one set per geometry) (issue 27).

The layouts, their order, the shrinking of the micro-batch and the choice among them are tools.jobtime.layouts'
(`search`, `plan_options`) and topology's `_preferred`; each value comes from the same float operations in the same
order, as numpy arrays over the shapes (row = one layout tried, column = one shape). A row is one layout kind
(single GPU, DDP, ZeRO-2, FSDP, HSDP, or tensor parallel at one degree) at one checkpointing setting and micro-batch
on every shape whose geometry (GPU count, GPUs per node, nodes) runs it; what depends on the geometry (per-GPU memory,
traffic, the plan) is looked up once per geometry and spread over its shapes. Each shape's rows keep the per-shape
search's order, since the kinds are tried in one global order of which every geometry's plans are a subsequence. The
per-shape search stays the reference: tests/test_batch_search.py checks that both list the same layouts and choose
the same one, with the same numbers, bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tools.indices import distinct
from tools.jobtime.batch.comm import Moved, comm_arrays
from tools.jobtime.batch.shapes import Batch, Geometry, Steps, Unbatchable
from tools.jobtime.collectives import Plan, Traffic
from tools.jobtime.layouts import (
    COMM_BOUND_SHARE,
    Tried,
    data_parallel_plans,
    layout_slot,
    tensor_parallel_plans,
    tried_of,
)
from tools.jobtime.workload import Workload

__all__ = ["Batch", "Geometry", "Row", "Search", "Steps", "Unbatchable"]

TP_EXTRA_LABEL = " + data-parallel gradient all-reduce"
"""What a tensor-parallel layout's label gains when its gradient all-reduce moves data (collectives.comm_on)."""
KINDS = ("single_gpu", "ddp", "zero2", "fsdp", "hsdp")
"""The data-parallel layouts in the order every geometry tries those it runs (layouts.data_parallel_plans)."""


@dataclass(slots=True)
class Row:
    """One layout tried on the shapes of a batch: per geometry its plan and label, per shape whether it was tried
    and its numbers."""

    plans: list[Plan | None]
    """Per geometry the plan (None where the layout does not run there)."""
    labels: list[str | None]
    ckpt: bool
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


class Search:
    """The layout search of one workload on a batch of shapes (`rows` in each shape's per-shape search order)."""

    def __init__(self, workload: Workload, batch: Batch, overlap: bool) -> None:
        self.workload, self.batch, self.overlap = workload, batch, overlap
        self.n = len(batch.usable)
        self.rows: list[Row] = []
        self._stacks: dict[tuple[str, int], np.ndarray] = {}

    def row(self, plans: list[Plan | None], ckpt: bool, micro: int, tried: np.ndarray) -> Row | None:
        """One layout at one checkpointing setting and micro-batch on the shapes `tried` whose geometry runs it and
        can split the model that way (None when none can)."""
        batch, workload = self.batch, self.workload
        slots: list[tuple[float, Traffic] | None] = [None] * len(plans)
        for index in distinct(batch.geo[tried], len(plans)):
            plan = plans[index]
            if plan is not None:
                total, _per_node, nodes = batch.geometries[index]
                slots[index] = layout_slot(workload, plan, total, nodes, ckpt, micro)
        runs = np.array([slot is not None for slot in slots], dtype=bool)[batch.geo]
        tried = tried & runs
        if not tried.any():
            return None
        moved = Moved([slot[1] if slot else None for slot in slots], batch.geo)
        per_gpu = np.array([slot[0] if slot else np.nan for slot in slots], dtype=float)[batch.geo]
        tp = next(plan.tp for plan in plans if plan is not None)
        seconds, utilisation = batch.compute(tp, ckpt, micro, tried)
        comm, exposed, extra = comm_arrays(moved, batch, seconds, self.overlap)
        return Row(
            plans=[plan if slot is not None else None for plan, slot in zip(plans, slots, strict=True)],
            labels=[slot[1].label if slot else None for slot in slots],
            ckpt=ckpt,
            tried=tried,
            micro=np.full(self.n, micro),
            per_gpu=per_gpu,
            seconds=seconds,
            comm=comm,
            exposed=exposed,
            accumulation=moved.accumulation,
            extra_label=extra,
            utilisation=utilisation,
        )

    def plan(self, plans: list[Plan | None], enabled: np.ndarray) -> None:
        """layouts.plan_options on the shapes `enabled`: the stated micro-batch, then (where none fits) each
        checkpointing setting at the largest smaller micro-batch that fits (or 1)."""
        workload, usable = self.workload, self.batch.usable
        stated = [
            found
            for ckpt in workload.checkpointing_variants
            if (found := self.row(plans, ckpt, workload.micro_batch_size, enabled)) is not None
        ]
        if not stated:
            return
        self.rows.extend(stated)
        ran = np.logical_or.reduce([found.tried for found in stated])
        shrink = ran & ~np.logical_or.reduce([found.per_gpu <= usable for found in stated])
        if not shrink.any():
            return
        for ckpt in workload.checkpointing_variants:
            self._shrunk(plans, ckpt, shrink)

    def _shrunk(self, plans: list[Plan | None], ckpt: bool, shrink: np.ndarray) -> None:
        """Per shape in `shrink`, the first smaller micro-batch whose layout fits (or micro-batch 1), as one row."""
        batch, workload = self.batch, self.workload
        usable, left = batch.usable, shrink.copy()
        picked: Row | None = None
        for micro in workload.smaller_micro_batches:
            per_gpu = np.full(len(plans), np.nan)
            for index in distinct(batch.geo[left], len(plans)):
                plan = plans[index]
                total, _per_node, nodes = batch.geometries[index]
                slot = layout_slot(workload, plan, total, nodes, ckpt, micro) if plan is not None else None
                if slot is not None:
                    per_gpu[index] = slot[0]
            spread = per_gpu[batch.geo]
            take = left & ~np.isnan(spread) & ((spread <= usable) | (micro == 1))
            if not take.any():
                continue
            found = self.row(plans, ckpt, micro, take)
            assert found is not None  # the same slots
            picked = found if picked is None else _merged(picked, found, take)
            left = left & ~take
            if not left.any():
                break
        if picked is not None:
            picked.tried = shrink & ~left
            self.rows.append(picked)

    def run(self) -> Search:
        """Every layout tried, data-parallel first; tensor-parallel ones where sharding cannot fit or scale."""
        batch, workload = self.batch, self.workload
        every = [data_parallel_plans(*geometry) for geometry in batch.geometries]
        for kind in KINDS:
            plans = [next((plan for plan in found if plan.layout == kind), None) for found in every]
            runs = np.array([plan is not None for plan in plans], dtype=bool)
            if runs.any():
                self.plan(plans, runs[batch.geo])
        fastest = self.fastest()
        fits = fastest >= 0
        best_share = np.zeros(self.n)
        if fits.any():
            index = np.arange(self.n)
            seconds = self._stack("seconds")[fastest, index]
            exposed = self._stack("exposed")[fastest, index]
            hidden = seconds + exposed
            best_share = np.where(hidden > 0, exposed / np.where(hidden > 0, hidden, 1.0), 0.0)
        too_many_replicas = batch.total > workload.global_batch_sequences()
        wanted = ~fits | too_many_replicas | (fits & (best_share >= COMM_BOUND_SHARE))
        wanted &= batch.nvlink
        if wanted.any():
            by_degree: dict[int, list[Plan | None]] = {}
            for number, (_total, per_node, nodes) in enumerate(batch.geometries):
                for plan in tensor_parallel_plans(workload, per_node, nodes, "nvlink"):
                    by_degree.setdefault(plan.tp, [None] * len(batch.geometries))[number] = plan
            for tp in sorted(by_degree):
                plans = by_degree[tp]
                enabled = wanted & np.array([plan is not None for plan in plans], dtype=bool)[batch.geo]
                if enabled.any():
                    self.plan(plans, enabled)
        return self

    def _stack(self, name: str) -> np.ndarray:
        """One field of the rows so far as a (rows, shapes) array (kept until a row is added: the choice, the
        preference and the smallest layout each read the same fields)."""
        key = (name, len(self.rows))
        found = self._stacks.get(key)
        if found is None:
            found = self._stacks[key] = np.array([getattr(row, name) for row in self.rows])
        return found

    def _per_token(self) -> np.ndarray:
        """layouts.time_per_token of each row so far on each shape, inf where it was not tried or does not fit."""
        if not self.rows:
            return np.full((0, self.n), np.inf)
        batch, seq = self.batch, self.workload.seq_len
        replicas = np.array([batch.total // self._tp(found) for found in self.rows])
        step = self._stack("seconds") + self._stack("exposed")
        per_token = step / (replicas * self._stack("micro") * seq)
        fitting = self._stack("tried") & (self._stack("per_gpu") <= batch.usable)
        return np.where(fitting, per_token, np.inf)

    @staticmethod
    def _tp(row: Row) -> int:
        """The row's tensor-parallel degree (one per row)."""
        return next(plan.tp for plan in row.plans if plan is not None)

    def fastest(self) -> np.ndarray:
        """Per shape the index of its fastest fitting row so far (the first of equals), -1 where none fits."""
        per_token = self._per_token()
        if not len(per_token):
            return np.full(self.n, -1)
        return np.where(np.isfinite(per_token.min(axis=0)), per_token.argmin(axis=0), -1)

    def preferred(self, tolerance: float) -> np.ndarray:
        """topology._preferred per shape: the first fitting row within `tolerance` of the fastest, -1 where none."""
        per_token = self._per_token()
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

    def chosen(self, picked: list[int]) -> list[Tried | None]:
        """`tried(picked[shape], shape)` for every shape (None where picked is -1), the fields of all shapes read from
        the rows at once (the same values and operations as `tried`)."""
        if not self.rows:
            return [None] * self.n
        at = np.maximum(np.array(picked, dtype=np.intp), 0)
        every = np.arange(self.n)
        seconds, comm, exposed, per_gpu, accumulation, micro, utilisation, extra = (
            self._stack(name)[at, every].tolist()
            for name in ("seconds", "comm", "exposed", "per_gpu", "accumulation", "micro", "utilisation", "extra_label")
        )
        usable, geo, rows = self.batch.usable.tolist(), self.batch.geo.tolist(), self.rows
        found: list[Tried | None] = []
        for shape, row in enumerate(picked):
            found.append(
                None
                if row < 0
                else _tried(
                    rows[row],
                    geo[shape],
                    seconds[shape],
                    comm[shape],
                    exposed[shape],
                    per_gpu[shape],
                    usable[shape],
                    extra[shape],
                    int(accumulation[shape]),
                    int(micro[shape]),
                    float(utilisation[shape]),
                )
            )
        return found

    def options(self, shape: int) -> list[Tried]:
        """Every layout tried on one shape, in the per-shape search's order."""
        return [self.tried(row, shape) for row, found in enumerate(self.rows) if found.tried[shape]]

    def tried(self, row: int, shape: int) -> Tried:
        """The per-shape search's Tried for one row on one shape (shares as layouts._option computes them)."""
        found = self.rows[row]
        geometry = int(self.batch.geo[shape])
        return _tried(
            found,
            geometry,
            float(found.seconds[shape]),
            float(found.comm[shape]),
            float(found.exposed[shape]),
            float(found.per_gpu[shape]),
            float(self.batch.usable[shape]),
            bool(found.extra_label[shape]),
            int(found.accumulation[shape]),
            int(found.micro[shape]),
            float(found.utilisation[shape]),
        )


def _tried(
    row: Row,
    geometry: int,
    seconds: float,
    comm: float,
    exposed: float,
    per_gpu: float,
    usable: float,
    extra: bool,
    accumulation: int,
    micro: int,
    utilisation: float,
) -> Tried:
    """A row's Tried on one shape of `geometry` from that shape's values (as Python numbers)."""
    plan, label = row.plans[geometry], row.labels[geometry]
    assert plan is not None and label is not None  # the row was tried on this shape
    label += TP_EXTRA_LABEL if extra else ""
    return tried_of(plan, per_gpu, usable, seconds, comm, exposed, label, row.ckpt, accumulation, micro, utilisation)


def _merged(first: Row, second: Row, take: np.ndarray) -> Row:
    """Row `first` with the shapes in `take` taken from `second` (the same layout at another micro-batch); a
    geometry's label is that of the first micro-batch its shapes were taken at."""
    return Row(
        plans=[mine if mine is not None else theirs for mine, theirs in zip(first.plans, second.plans, strict=True)],
        labels=[mine if mine is not None else theirs for mine, theirs in zip(first.labels, second.labels, strict=True)],
        ckpt=first.ckpt,
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
