"""A job's shape entries (evaluation, on-demand and spot run figures per shape) are kept across the rankings that
price its shapes alike: a follow-up that changes only the spot choice, the GPU count or the providers wished costs
no shape again, and every ranking equals the one made with nothing kept (issue 27)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import tools.ranking.costing as costing
from contract.jobspec import JobSpec
from tools.catalog import ensure_db
from tools.ranking.rank import clear_cache, rank_offers

JOB = JobSpec(language="en", model="mistral-7b", method="qlora", seq_len=1777, dataset_tokens=30_000_000)


@pytest.fixture()
def evaluated(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """The shapes costing evaluates (one per new shape entry), one at a time or at once."""
    clear_cache()
    seen: list[object] = []
    evaluate, evaluate_many = costing.evaluate, costing.evaluate_many

    def counting(shape, *args):  # type: ignore[no-untyped-def]
        seen.append(shape)
        return evaluate(shape, *args)

    def counting_many(shapes, *args):  # type: ignore[no-untyped-def]
        seen.extend(shapes)
        return evaluate_many(shapes, *args)

    monkeypatch.setattr(costing, "evaluate", counting)
    monkeypatch.setattr(costing, "evaluate_many", counting_many)
    yield seen
    clear_cache()


def _cold(spec: JobSpec) -> dict:
    """The ranking with nothing kept."""
    clear_cache()
    return rank_offers(spec, db_path=ensure_db()).model_dump()


@pytest.mark.parametrize(
    "change",
    [{"interruptible_ok": True}, {"interruptible_ok": False}, {"num_gpus": 8}, {"providers": ["aws", "lambda"]}],
)
def test_a_follow_up_costs_no_shape_again(evaluated: list[object], change: dict) -> None:
    db = ensure_db()
    rank_offers(JOB, db_path=db)
    first = set(evaluated)
    assert len(first) > 50
    evaluated.clear()
    follow_up = JOB.model_copy(update=change)
    warm = rank_offers(follow_up, db_path=db).model_dump()
    assert not first & set(evaluated), "no shape of the job is evaluated again"
    assert warm == _cold(follow_up)


@pytest.mark.parametrize("change", [{"deadline_hours": 3.0}, {"dataset_tokens": 90_000_000}, {"epochs": 3.0}])
def test_what_the_entries_read_keeps_them_apart(evaluated: list[object], change: dict) -> None:
    """A deadline (the spot run model), more tokens or epochs (the time) make new entries, equal to a cold ranking."""
    db = ensure_db()
    rank_offers(JOB.model_copy(update={"interruptible_ok": True}), db_path=db)
    evaluated.clear()
    other = JOB.model_copy(update={"interruptible_ok": True, **change})
    warm = rank_offers(other, db_path=db).model_dump()
    assert evaluated, "the entries are made again"
    assert warm == _cold(other)


@pytest.mark.parametrize(
    "change",
    [{"language": "it"}, {"language": "id", "budget": {"amount": 40, "currency": "EUR"}}],
)
def test_the_same_job_in_another_language_or_budget_plans_nothing_again(
    monkeypatch: pytest.MonkeyPatch, change: dict
) -> None:
    """A ranking reads no language and its plans no budget: asked so, the job's kept plans are used, and the ranking
    equals a cold one."""
    import tools.ranking.plans as plans

    db = ensure_db()
    clear_cache()
    rank_offers(JOB, db_path=db)
    costed: list[int] = []
    cost_first = plans.cost_first_plans
    monkeypatch.setattr(plans, "cost_first_plans", lambda items, memo: costed.append(1) or cost_first(items, memo))
    again = JOB.model_validate({**JOB.model_dump(), **change})
    warm = rank_offers(again, db_path=db).model_dump()
    assert costed == []
    monkeypatch.undo()
    assert warm == _cold(again)
    clear_cache()


def test_entries_read_the_assessment_as_its_explanation_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ranking's entries take the layout, verdict and settings from the shape's assessment without explaining it
    (its options and assumptions are for check_topology), and say exactly what the explained topology says."""
    import tools.ranking.rank as rank
    from tools.jobtime.topology import Assessment

    clear_cache()
    built: list[tuple[object, tuple, dict]] = []
    build_entry = rank.build_entry
    monkeypatch.setattr(rank, "build_entry", lambda *a, **k: built.append((a[0], a, k)) or build_entry(*a, **k))
    explained: list[object] = []
    result = Assessment.result
    monkeypatch.setattr(Assessment, "result", lambda self: explained.append(self) or result(self))
    for spec in (
        JOB,
        JobSpec.model_validate({**JOB.model_dump(), "num_gpus": 8, "deadline_hours": 5.0, "budget": {"amount": 9}}),
    ):
        rank_offers(spec, db_path=ensure_db())
    assert built and not explained
    for item, args, kwargs in built:
        direct = build_entry(*args, **kwargs)
        via_result = build_entry(item._replace(topology=item.topology.result()), *args[1:], **kwargs)  # type: ignore[attr-defined]
        assert direct.model_dump() == via_result.model_dump()
    clear_cache()
