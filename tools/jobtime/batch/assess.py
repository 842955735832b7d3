"""topology.assess on many candidates at once: their shapes, whatever their GPU geometry, go through one array search
(tools.jobtime.batch.search), and each gets the same Assessment the per-shape search gives it (issue 27). Where some
GPU's micro-step is unknown at a layout the search needs, each geometry is searched on its own and those that need it
are left to the per-shape search."""

from __future__ import annotations

import math
from collections.abc import Sequence

from tools.gpus import GpuSpec
from tools.jobtime.batch.search import Batch, Geometry, Search, Steps, Unbatchable
from tools.jobtime.candidate import Candidate
from tools.jobtime.layouts import memory_gib
from tools.jobtime.throughput import peak_tflops
from tools.jobtime.topology import (
    DEFAULT_MEMORY_MARGIN,
    PREFERENCE_TOLERANCE,
    SINGLE_GPU,
    Assessment,
    Hardware,
)
from tools.jobtime.verdicts import verdict_code
from tools.jobtime.workload import Workload


def assess_many(
    workload: Workload,
    found: Sequence[tuple[Candidate, Hardware]],
    *,
    margin: float = DEFAULT_MEMORY_MARGIN,
    overlap: bool = True,
) -> list[Assessment | None]:
    """topology.assess on many candidates, their shapes searched at once; None where a shape needs the per-shape
    search (no GPU spec or no step compute for it)."""
    results: list[Assessment | None] = [None] * len(found)
    stated, ckpt = workload.micro_batch_size, workload.gradient_checkpointing
    known: dict[int, bool] = {}
    by_geometry: dict[tuple[int, int, int], list[int]] = {}
    for index, (_candidate, hardware) in enumerate(found):
        gpu = hardware.gpu
        if gpu is None:
            continue
        if id(gpu) not in known:
            known[id(gpu)] = bool(peak_tflops(gpu, workload.precision))  # whether its step is known (step_compute)
        if known[id(gpu)]:
            by_geometry.setdefault((hardware.total, hardware.per_node, hardware.nodes), []).append(index)
    single = memory_gib(workload, 1, SINGLE_GPU, ckpt, stated) or 0.0
    rows: dict[int, int] = {}
    gpus: list[GpuSpec] = []
    for indices in by_geometry.values():
        for index in indices:
            gpu = found[index][1].gpu
            if rows.setdefault(id(gpu), len(gpus)) == len(gpus):
                gpus.append(gpu)  # type: ignore[arg-type]
    steps = Steps(workload, gpus)  # one table for every shape: a GPU's micro-step is the same in each geometry
    try:
        batches = [_searched(workload, found, list(by_geometry.items()), steps, margin, overlap)]
    except Unbatchable:  # some GPU's step is unknown at some layout: search geometry by geometry, skip those
        batches = []
        for item in by_geometry.items():
            try:
                batches.append(_searched(workload, found, [item], steps, margin, overlap))
            except Unbatchable:
                continue
    for searched, indices in batches:
        _assessed(workload, found, searched, indices, single, margin, overlap, results)
    return results


def _searched(
    workload: Workload,
    found: Sequence[tuple[Candidate, Hardware]],
    geometries: list[tuple[Geometry, list[int]]],
    steps: Steps,
    margin: float,
    overlap: bool,
) -> tuple[Search, list[int]]:
    """The layout search over every shape of `geometries` at once, and the shapes' indices in `found` (its
    columns)."""
    indices = [index for _geometry, members in geometries for index in members]
    geo = [number for number, (_geometry, members) in enumerate(geometries) for _index in members]
    shapes = [found[index][1] for index in indices]
    batch = Batch.of(
        [geometry for geometry, _members in geometries],
        geo,
        steps,
        [steps.row_of(hardware.gpu) for hardware in shapes],
        [hardware.links for hardware in shapes],
        [hardware.vram * (1.0 - margin) for hardware in shapes],
    )
    return Search(workload, batch, overlap).run(), indices


def _assessed(
    workload: Workload,
    found: Sequence[tuple[Candidate, Hardware]],
    searched: Search,
    indices: list[int],
    single: float,
    margin: float,
    overlap: bool,
    results: list[Assessment | None],
) -> None:
    """Each searched shape's Assessment into `results`, as topology.assess makes it."""
    batch = searched.batch
    chosen, least = searched.chosen(searched.preferred(PREFERENCE_TOLERANCE).tolist()), searched.smallest().tolist()
    usable, geo = batch.usable.tolist(), batch.geo.tolist()
    for column, index in enumerate(indices):
        candidate, hardware = found[index]
        total, per_node, nodes = batch.geometries[geo[column]]
        best = chosen[column]
        smallest = least[column] if least[column] != math.inf else single
        verdict = verdict_code(best, total, nodes, hardware.links, usable[column], per_node, workload)
        results[index] = Assessment(
            workload=workload,
            candidate=candidate,
            margin=margin,
            overlap=overlap,
            gpu=hardware.gpu,
            vram=hardware.vram,
            gpu_count=total,
            per_node=per_node,
            nodes=nodes,
            links=hardware.links,
            usable=usable[column],
            single=single,
            searched=searched,
            column=column,
            best=best,
            smallest=smallest,
            verdict=verdict,
        )
