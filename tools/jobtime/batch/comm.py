"""Communication of one layout over every shape of a batch at once: collectives.comm_on's arithmetic on arrays, each
shape with its geometry's traffic and its own links (tools.jobtime.batch.search)."""

from __future__ import annotations

import numpy as np

from tools.jobtime.batch.shapes import Batch
from tools.jobtime.collectives import Traffic


def _over(moved: np.ndarray, bytes_per_s: np.ndarray) -> np.ndarray:
    """collectives.over on every shape's bandwidth (bytes/s); zero where the collective does not run (NaN bytes)."""
    return np.where(np.isnan(moved), 0.0, moved / bytes_per_s)


def _exposed(seconds: np.ndarray, window: np.ndarray, overlap: bool) -> np.ndarray:
    """collectives._exposed: max(seconds - window, 0.0), Python's max (the first argument unless 0.0 is larger)."""
    if not overlap:
        return seconds
    left = seconds - window
    return np.where(left < 0.0, 0.0, left)


class Moved:
    """The traffic of one layout per shape: each Traffic field of its geometry spread over the shapes (NaN where a
    collective does not run)."""

    def __init__(self, found: list[Traffic | None], geo: np.ndarray) -> None:
        def spread(values: list[float | None]) -> np.ndarray:
            """One value per geometry as one per shape."""
            per_geometry = np.array([np.nan if value is None else value for value in values], dtype=float)
            spread_out: np.ndarray = per_geometry[geo]
            return spread_out

        known = [moved for moved in found if moved is not None]
        self.layout = known[0].layout
        self.backward_share = known[0].backward_share  # the method's and checkpointing's: one per row
        self.first = spread([moved.first if moved else None for moved in found])
        self.second = spread([moved.second if moved else None for moved in found])
        self.third = spread([moved.third if moved else None for moved in found])
        self.scale = spread([moved.scale if moved else None for moved in found])
        self.accumulation = np.array([moved.accumulation if moved else 1 for moved in found], dtype=np.int64)[geo]
        self.one_group = np.array([bool(moved and moved.one_group_per_node) for moved in found], dtype=bool)[geo]


def comm_arrays(
    moved: Moved, batch: Batch, seconds: np.ndarray, overlap: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """collectives.comm_on over every shape: (seconds, exposed seconds, whether a TP label gains its extra)."""
    n = len(seconds)
    none = np.zeros(n, dtype=bool)
    backward = moved.backward_share * seconds
    accumulation, layout = moved.accumulation, moved.layout
    dp, intra = batch.dp_bytes, batch.intra_bytes
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
    if layout == "hsdp":
        every = 2 * _over(moved.first, intra) + _over(moved.second, intra)
        once = _over(moved.third, batch.node_bytes)
        return (
            every + once / accumulation,
            _exposed(every, seconds, overlap) + _exposed(once, backward, overlap) / accumulation,
            none,
        )
    tp_s = moved.scale * _over(moved.first, intra)
    dp_once = _over(moved.second, np.where(moved.one_group, batch.node_bytes, dp))
    both = tp_s + dp_once / accumulation
    return both, both, dp_once != 0.0
