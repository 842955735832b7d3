"""The shapes of a ranking timed at once (tools.jobtime.job_times, tools.catalog.evaluate_many) give what timing them
one by one gives (job_time, evaluate), bit for bit: runnable or not, with and without a layout that drops recompute."""

from __future__ import annotations

import pytest

from contract.jobspec import JobSpec
from tools.catalog import candidate_groups, ensure_db, evaluate, evaluate_many, verdicts_of, workload_key
from tools.jobtime import job_tokens, shape_workload

SPECS = [
    JobSpec(language="en", model="mistral-7b", method="qlora", seq_len=1333),
    JobSpec(language="en", model="llama-3.1-70b", method="full_finetune", dataset_tokens=50_000_000),
    JobSpec(language="en", model="qwen3-30b-a3b", method="lora", micro_batch_size=4, epochs=2.0),
]


@pytest.mark.parametrize("spec", SPECS)
def test_shapes_timed_at_once_equal_one_by_one(spec: JobSpec) -> None:
    db = ensure_db()
    shapes = list(
        dict.fromkeys(shape for _group, shape in candidate_groups(str(db), db.stat().st_mtime, None, None, None))
    )
    workload = shape_workload(spec)
    tokens = job_tokens(spec, seq_len=workload.seq_len, total_params=workload.total_params)
    verdicts = verdicts_of(workload_key(workload), 0.05)
    at_once = evaluate_many(shapes, workload, tokens, 0.05, verdicts)
    one_by_one = [evaluate(shape, workload, tokens, 0.05, verdicts) for shape in shapes]
    assert at_once == one_by_one
    assert any(e.time is not None for e in at_once) and any(e.time is None for e in at_once)
