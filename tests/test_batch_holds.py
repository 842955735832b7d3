"""Whether memory holds a job on a candidate, from per-GPU memory alone (tools.jobtime.batch.holds, what the scale-out
search asks at each node count), equals what the full layout search says: a layout fits, or only tensor parallelism
with NVLink would (issue 27)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contract.jobspec import JobSpec
from tools.catalog import cached_groups, ensure_db
from tools.catalog.shapes import Shape, _hardware, shape_of
from tools.jobtime import build_workload
from tools.jobtime.batch.holds import holds_many
from tools.jobtime.topology import assess
from tools.jobtime.workload import Workload

NODES = (1, 2, 3, 5, 9, 17, 32)


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> list[Shape]:
    """Every one-node shape of the built-in catalog, and its 8-GPU ones on several node counts."""
    path = ensure_db(tmp_path_factory.mktemp("catalog") / "catalog.sqlite")
    groups = cached_groups(str(path), Path(path).stat().st_mtime, None, None, None)
    found = dict.fromkeys(shape for _group, shape in groups)
    for group, _shape in groups:
        if group.offer.gpu_count >= 8:
            for nodes in NODES:
                found.setdefault(shape_of(group.offer, nodes))
    return list(found)


def _compare(workload: Workload, shapes: list[Shape]) -> tuple[set[str], int]:
    """holds_many against the full search on every shape: (verdicts seen where answered, shapes answered)."""
    found = [pair for shape in shapes if (pair := _hardware(shape)) is not None]
    verdicts, answered = set(), 0
    for (candidate, hardware), held in zip(found, holds_many(workload, found, margin=0.05), strict=True):
        if held is None:
            continue
        full = assess(workload, candidate, margin=0.05, hardware=hardware)
        assert held == (full.runnable or full.verdict == "needs_nvlink_node"), (candidate, full.verdict)
        verdicts.add(full.verdict)
        answered += 1
    return verdicts, answered


@pytest.mark.parametrize(
    "job",
    [
        dict(model="llama-3-70b", method="lora", seq_len=1028),
        dict(model="llama-3-70b", method="full_finetune", seq_len=2048),
        dict(model="llama-3.1-405b", method="qlora", seq_len=4096, micro_batch_size=4),
        dict(model="qwen2.5-72b", method="full_finetune", seq_len=8192, gradient_checkpointing=False),
        dict(model="llama-3.1-8b", method="full_finetune", seq_len=32768, micro_batch_size=8),
    ],
    ids=lambda job: f"{job['model']}-{job['method']}",
)
def test_memory_alone_says_what_the_search_says(job: dict[str, object], shapes: list[Shape]) -> None:
    """Big jobs on every catalog shape and node count: the same answer wherever one is given."""
    _verdicts, answered = _compare(build_workload(JobSpec(language="en", **job)), shapes)  # type: ignore[arg-type]
    assert answered >= len(shapes) * 0.8


def test_every_answer_is_reached(shapes: list[Shape]) -> None:
    """Not vacuous: among these jobs some shapes hold the job, some do not, and some need an NVLink node."""
    seen: set[str] = set()
    for job in (
        dict(model="llama-3-70b", method="full_finetune", seq_len=2048),
        dict(model="llama-3.1-8b", method="full_finetune", seq_len=32768, gradient_checkpointing=False),
    ):
        seen |= _compare(build_workload(JobSpec(language="en", **job)), shapes)[0]  # type: ignore[arg-type]
    assert {"does_not_fit", "needs_nvlink_node", "multi_node_ok"} <= seen


@settings(max_examples=25, deadline=None)
@given(
    seq=st.integers(min_value=256, max_value=65536),
    micro=st.integers(min_value=1, max_value=32),
    model=st.sampled_from(["llama-3-70b", "qwen2.5-72b", "llama-3.1-405b", "mixtral-8x7b", "qwen2.5-14b"]),
    method=st.sampled_from(["full_finetune", "lora", "qlora"]),
    checkpointing=st.sampled_from([None, True, False]),
)
def test_any_big_job_agrees(
    seq: int, micro: int, model: str, method: str, checkpointing: bool | None, shapes: list[Shape]
) -> None:
    """Random sequence lengths, micro-batches, models, methods and checkpointing: the same answers."""
    spec = JobSpec(
        language="en",
        model=model,
        method=method,
        seq_len=seq,
        micro_batch_size=micro,
        gradient_checkpointing=checkpointing,
    )
    _compare(build_workload(spec), [shape for shape in shapes if shape.gpus_per_node >= 8][::3])
