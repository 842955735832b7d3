"""The shapes one layout search runs over (tools.jobtime.batch.search): per shape its GPU geometry, GPU, links and
usable memory as arrays, and the micro-step of each GPU per layout setting, computed once for all of them."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tools.gpus import GpuSpec
from tools.jobtime.collectives import Links
from tools.jobtime.layouts import step_shape
from tools.jobtime.micro_step import CALIBRATION, ceiling_for, step_figures
from tools.jobtime.throughput import peak_tflops
from tools.jobtime.workload import Workload

Geometry = tuple[int, int, int]
"""(GPUs in total, GPUs per node, nodes)."""


class Unbatchable(Exception):
    """A shape whose step compute is unknown: the per-shape search handles it."""


class Steps:
    """Step compute of one workload on each distinct GPU of the shapes searched together, per (tensor parallel,
    checkpointing, micro-batch), every GPU at once (micro_step.step_figures on arrays): shapes and geometries share
    their GPUs."""

    def __init__(self, workload: Workload, gpus: list[GpuSpec]) -> None:
        self.workload, self.gpus = workload, gpus
        self._rows = {id(gpu): row for row, gpu in enumerate(gpus)}
        self._found: dict[tuple[int, bool, int], tuple[np.ndarray, np.ndarray]] = {}
        peaks = [peak_tflops(gpu, workload.precision) for gpu in gpus]
        self._peak = np.array([peak if peak else np.nan for peak in peaks], dtype=float)  # NaN: step unknown
        self._ceiling = np.array([ceiling_for(gpu)[0] for gpu in gpus], dtype=float)
        self._bandwidth = np.array([gpu.memory_bandwidth_tbs or 1.0 for gpu in gpus], dtype=float)

    def row_of(self, gpu: GpuSpec | None) -> int:
        """The row of one of the GPUs."""
        return self._rows[id(gpu)]

    def get(self, tp: int, ckpt: bool, micro: int, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Seconds and utilisation of one micro-step on each GPU (`figures`, kept per setting); Unbatchable when the
        step of a `wanted` one is unknown."""
        key = (tp, ckpt, micro)
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = self.figures(tp, ckpt, micro)
        if (wanted & np.isnan(found[0])).any():
            raise Unbatchable
        return found

    def figures(self, tp: int, ckpt: bool, micro: int) -> tuple[np.ndarray, np.ndarray]:
        """step_compute's seconds and utilisation (StepCompute.utilisation_value) on every GPU at once, NaN where
        its dense peak at the workload's precision is unknown (where step_compute gives none)."""
        shape = step_shape(self.workload, tp, ckpt, micro)
        with np.errstate(invalid="ignore"):  # unknown peaks stay NaN
            figures = step_figures(shape, self._peak, self._ceiling, self._bandwidth, CALIBRATION)
        seconds, achieved = figures[3], figures[4]
        return seconds, np.array([round(value, 4) for value in achieved.tolist()], dtype=float)


@dataclass(slots=True)
class Batch:
    """The shapes searched together: per shape its geometry (an index into `geometries`), its GPU (a row of
    `steps`), links and usable memory."""

    geometries: list[Geometry]
    geo: np.ndarray
    total: np.ndarray
    """GPUs in total per shape (its geometry's)."""
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
        geometries: list[Geometry],
        geo: list[int],
        steps: Steps,
        gpu_rows: list[int],
        links: list[Links],
        usable: list[float],
    ) -> Batch:
        """The batch's arrays from per-shape geometry indices, GPU rows, links and usable GiB."""
        return cls(
            geometries=geometries,
            geo=np.array(geo, dtype=np.intp),
            total=np.array([geometries[index][0] for index in geo], dtype=np.int64),
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
