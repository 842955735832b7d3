"""The first plans costed as columns (tools.ranking.batch_costing) equal cost_offer's, bit for bit, for every one-node
candidate of the built-in catalog: spot allowed, refused or open; with and without budget, deadline and a stated
preemption rate (issue 27)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contract.jobspec import JobSpec
from tools.catalog import candidate_groups, ensure_db
from tools.ranking.batch_costing import cost_first_plans
from tools.ranking.costing import Costed, CostingJob, ShapeCosts, ShapeEntry, cost_offer
from tools.ranking.plans import _costable
from tools.ranking.selection import Selection, selection_of


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built-in catalog in a fresh file."""
    return ensure_db(tmp_path_factory.mktemp("catalog") / "catalog.sqlite")


def _selection(catalog: Path) -> Selection:
    """Every one-node candidate of the catalog as one Selection (as a ranking without a floor would select them)."""
    groups = candidate_groups(str(catalog), catalog.stat().st_mtime, None, None, None)
    return selection_of(tuple((group, shape, group.offer.gpu_count) for group, shape in groups))


def _costed(selection: Selection, memo: ShapeCosts) -> tuple[np.ndarray, list[Any], list[Costed | None]]:
    """The positions of the candidates whose shape holds the job, each shape's _costable, and their first plans."""
    memo.prefill(selection.shapes)
    per_shape = [_costable(shape, memo) for shape in selection.shapes]
    costable = np.array([not isinstance(found, str) for found in per_shape], dtype=bool)[selection.shape_at]
    at = np.flatnonzero(costable)
    return at, per_shape, cost_first_plans(selection, at, per_shape, memo)


def _memo(spec: JobSpec, rate: float | None) -> ShapeCosts:
    """A ranking's memo for `spec` (as rank_offers makes it, with the budget taken as USD)."""
    return ShapeCosts(
        job=CostingJob.of(spec, margin=0.05, budget=spec.budget.amount if spec.budget else None, rate=rate)
    )


def _bits(value: Any) -> Any:
    """A value compared exactly: floats by their bits (so -0.0, 0.0 and NaN are told apart), tuples by their items."""
    if isinstance(value, float):
        return ("float", value.hex()) if not math.isnan(value) else ("float", "nan")
    if isinstance(value, tuple):
        return tuple(_bits(item) for item in value)
    return (type(value).__name__, value)


def _same(fast: Costed | None, slow: Costed | None) -> None:
    """Both None, or the same offer, objects and numbers (numbers of the same Python type)."""
    assert (fast is None) == (slow is None)
    if fast is None or slow is None:
        return
    for name in Costed._fields:
        mine, theirs = getattr(fast, name), getattr(slow, name)
        if name in ("offer", "group", "topology", "time"):
            assert mine is theirs, name
        else:
            assert _bits(mine) == _bits(theirs), (name, mine, theirs)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    model=st.sampled_from(["llama-3.1-8b", "qwen2.5-14b", "llama-3.2-1b", "mistral-7b"]),
    method=st.sampled_from(["lora", "qlora", "full_finetune"]),
    seq_len=st.integers(min_value=256, max_value=16_384),
    spot=st.sampled_from([None, True, False]),
    budget=st.sampled_from([None, 5.0, 60.0, 10_000.0]),
    deadline=st.sampled_from([None, 0.5, 3.0, 48.0]),
    rate=st.sampled_from([None, 0.02, 3.0]),
)
def test_columns_equal_cost_offer(
    catalog: Path,
    model: str,
    method: str,
    seq_len: int,
    spot: bool | None,
    budget: float | None,
    deadline: float | None,
    rate: float | None,
) -> None:
    """Every one-node candidate whose shape holds the job: the batch's plan is cost_offer's."""
    fields: dict[str, Any] = {
        "language": "en",
        "model": model,
        "method": method,
        "seq_len": seq_len,
        "dataset_tokens": 50_000_000,
    }
    if spot is not None:
        fields["interruptible_ok"] = spot
    if budget is not None:
        fields["budget"] = {"amount": budget, "currency": "USD"}
    if deadline is not None:
        fields["deadline_hours"] = deadline
    spec = JobSpec(**fields)
    selection = _selection(catalog)
    fast_memo, slow_memo = _memo(spec, rate), _memo(spec, rate)
    at, per_shape, fast = _costed(selection, fast_memo)
    assert len(at) > 100
    fresh: dict[int, ShapeEntry] = {}  # the reference's own run figures: nothing the batch kept is reused
    for place, plan in zip(at.tolist(), fast, strict=True):
        group, _shape, _gpus = selection.items[place]
        entry, topology, time = per_shape[selection.shape_at[place]]
        slow_entry = fresh.setdefault(id(entry), ShapeEntry(evaluation=entry.evaluation))
        _same(plan, cost_offer(group, 1, slow_entry, topology, time, slow_memo))
    if spot is False:
        assert not any(plan is not None and plan.use_spot for plan in fast)


def test_both_billing_models_are_compared(catalog: Path) -> None:
    """The comparison is not vacuous: with spot allowed, some first plans are spot and some on-demand, and some
    offers have no allowed price at all when spot is refused."""
    for spot, want in ((True, {True, False}), (False, {False, None})):
        spec = JobSpec(language="en", model="llama-3.1-8b", method="lora", interruptible_ok=spot)
        memo = _memo(spec, None)
        kinds = {None if plan is None else plan.use_spot for plan in _costed(_selection(catalog), memo)[2]}
        assert want <= kinds
