"""The candidates a job's memory floor keeps, with the columns their first plans are costed from that no job changes:
each one's one-node shape, (shape, provider) pair and effective prices, and each pair's billing rule.

A never-seen job's floor is new, but it keeps the same candidates as an earlier job's whenever no candidate's memory
lies between the two floors (a catalog has ~20 memory sizes): such jobs share one Selection, so a ranking looks its
~1,000 candidates up by position in arrays instead of walking them in Python (issue 27)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tools.catalog import OfferGroup, Shape
from tools.jobtime import billing_for

Item = tuple[OfferGroup, Shape, int]
"""A candidate: its group, its one-node shape and its GPUs per instance (the shared tuples of a catalog version)."""


@dataclass(frozen=True, eq=False)
class Selection:
    """Candidates (`items`, in catalog order) and their job-independent columns, by position."""

    items: tuple[Item, ...]
    shapes: tuple[Shape, ...]
    """The distinct one-node shapes, in the order the items first name them."""
    shape_at: np.ndarray
    """Per item the index of its one-node shape in `shapes`."""
    gpus: np.ndarray
    """Per item its GPUs per instance."""
    pairs: tuple[tuple[int, str], ...]
    """The distinct (shape index, provider) pairs, in the order the items first name them."""
    pair_at: np.ndarray
    """Per item the index of its pair in `pairs`."""
    on_demand: np.ndarray
    """Per item its effective on-demand $/h (NaN: none)."""
    interruptible: np.ndarray
    """Per item its effective interruptible $/h (NaN: none)."""
    granularity: np.ndarray
    """Per pair its provider's billing granularity in seconds."""
    minimum: np.ndarray
    """Per pair its provider's billed minimum in seconds."""


def _prices(values: list[float | None]) -> np.ndarray:
    """Prices as floats, NaN where there is none."""
    return np.array([math.nan if value is None else value for value in values], dtype=float)


def selection_of(items: tuple[Item, ...]) -> Selection:
    """The columns of `items`."""
    shape_index: dict[Shape, int] = {}
    pair_index: dict[tuple[int, str], int] = {}
    shape_at, pair_at = [], []
    for group, shape, _gpus in items:
        at = shape_index.setdefault(shape, len(shape_index))
        shape_at.append(at)
        pair_at.append(pair_index.setdefault((at, group.offer.provider), len(pair_index)))
    rules = [billing_for(provider)[0] for _shape, provider in pair_index]
    return Selection(
        items=items,
        shapes=tuple(shape_index),
        shape_at=np.array(shape_at, dtype=np.intp),
        gpus=np.array([gpus for _group, _shape, gpus in items], dtype=np.int64),
        pairs=tuple(pair_index),
        pair_at=np.array(pair_at, dtype=np.intp),
        on_demand=_prices([group.on_demand for group, _shape, _gpus in items]),
        interruptible=_prices([group.interruptible for group, _shape, _gpus in items]),
        granularity=np.array([rule.granularity_s for rule in rules], dtype=float),
        minimum=np.array([rule.minimum_s for rule in rules], dtype=float),
    )
