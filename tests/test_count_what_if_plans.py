"""'And with N GPUs?' after a job: the offers whose one node gives N GPUs keep the plan the job's ranking made of
them (the same shape, provider and price: the same plan), instead of being costed again; the ranking equals one
made cold, whatever budget the job was ranked with before (tools.ranking.plans, issue 27)."""

from __future__ import annotations

import pytest

import tools.ranking.plans as plans
from contract.jobspec import JobSpec
from tools.catalog import ensure_db
from tools.ranking.rank import clear_cache, rank_offers

JOBS = [
    JobSpec(language="en", model="qwen2.5-14b", method="qlora", seq_len=1777, dataset_tokens=20_000_000),
    JobSpec(
        language="it",
        model="llama-3.1-8b",
        method="lora",
        seq_len=3001,
        dataset_examples=10_000,
        budget={"amount": 50, "currency": "EUR"},
        interruptible_ok=True,
    ),
    JobSpec(
        language="id",
        model="llama-3.2-1b",
        method="full_finetune",
        seq_len=777,
        dataset_tokens=200_000_000,
        deadline_hours=6,
        interruptible_ok=False,
        budget={"amount": 30, "currency": "USD"},
    ),
]


@pytest.fixture()
def costed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many offers each ranking sends to the first-plan costing."""
    clear_cache()
    counted: list[int] = []
    real = plans.cost_first_plans

    def counting(selection, at, per_shape, memo):  # type: ignore[no-untyped-def]
        counted.append(len(at))
        return real(selection, at, per_shape, memo)

    monkeypatch.setattr(plans, "cost_first_plans", counting)
    yield counted
    clear_cache()


@pytest.mark.parametrize("job", JOBS, ids=lambda job: job.model or "")
@pytest.mark.parametrize("count", [1, 2, 4, 8, 16])
def test_a_count_what_if_equals_a_cold_ranking(costed: list[int], job: JobSpec, count: int) -> None:
    db = ensure_db()
    what_if = job.model_copy(update={"num_gpus": count})
    cold = rank_offers(what_if, db_path=db).model_dump()
    clear_cache()
    other_budget = JobSpec.model_validate(job.model_dump() | {"budget": {"amount": 1, "currency": "USD"}})
    rank_offers(other_budget, db_path=db)  # the job's plans, made for another budget
    rank_offers(job, db_path=db)
    assert rank_offers(what_if, db_path=db).model_dump() == cold


@pytest.mark.parametrize("count", [1, 4, 8])
def test_a_count_what_if_costs_no_offer_the_job_planned_on_one_node(costed: list[int], count: int) -> None:
    db = ensure_db()
    job = JOBS[0]
    rank_offers(job, db_path=db)
    costed.clear()
    rank_offers(job.model_copy(update={"num_gpus": count}), db_path=db)
    assert sum(costed) == 0
