"""A ranking asked again with only another budget (a what-if) reuses the job's budget-free plans: its result must be
exactly the one a fresh ranking gives, for budgets that admit everything, some plans or none, in USD or another
currency, with deadlines, spot and multi-node jobs. Real shipped catalog (SQLite)."""

from __future__ import annotations

import pytest

from contract.jobspec import Budget, JobSpec
from tools.catalog import ensure_db
from tools.ranking.rank import clear_cache, rank_offers

JOBS = [
    JobSpec(language="it", model="llama-3-8b", method="qlora", dataset_tokens=50_000_000, interruptible_ok=True),
    JobSpec(language="en", model="llama-3-70b", method="full_finetune", dataset_tokens=200_000_000, deadline_hours=48),
    JobSpec(
        language="id", model="mistral-7b", method="lora", dataset_tokens=20_000_000, interruptible_ok=False, num_gpus=4
    ),
    JobSpec(language="en", model="qwen2.5-14b", method="qlora", dataset_tokens=30_000_000, deadline_hours=6),
]
BUDGETS = [None, Budget(amount=5), Budget(amount=40), Budget(amount=300, currency="EUR"), Budget(amount=1e6)]


@pytest.mark.parametrize("job", JOBS, ids=lambda job: f"{job.model}-{job.method}")
def test_a_budget_what_if_ranks_exactly_as_a_fresh_ranking(job):
    db = ensure_db()
    clear_cache()
    for before, after in zip(BUDGETS, BUDGETS[1:] + BUDGETS[:1]):
        rank_offers(job.model_copy(update={"budget": before}), db_path=db)  # the plans kept without the budget
        what_if = rank_offers(job.model_copy(update={"budget": after}), db_path=db)
        clear_cache()
        fresh = rank_offers(job.model_copy(update={"budget": after}), db_path=db)
        assert what_if.model_dump_json() == fresh.model_dump_json(), (job, before, after)
    clear_cache()


@pytest.mark.parametrize(
    "change",
    [{"deadline_hours": 3}, {"interruptible_ok": False}, {"num_gpus": 8}, {"dataset_tokens": 5_000_000}],
    ids=lambda change: next(iter(change)),
)
def test_jobs_that_differ_in_more_than_the_budget_do_not_share_plans(change):
    db = ensure_db()
    job = JOBS[0].model_copy(update={"budget": Budget(amount=40)})
    other = job.model_copy(update={**change, "budget": Budget(amount=60)})
    clear_cache()
    rank_offers(job, db_path=db)
    after_job = rank_offers(other, db_path=db)
    clear_cache()
    fresh = rank_offers(other, db_path=db)
    assert after_job.model_dump_json() == fresh.model_dump_json()
    clear_cache()
