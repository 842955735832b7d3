"""The layout search over many shapes at once (tools.jobtime.batch.search) agrees with the per-shape search, bit for
bit, on every shape of the built-in catalog (one node and several) for jobs that exercise every branch: data
parallel, shrunk micro-batches, tensor parallelism, nothing fitting, no overlap (issue 27)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contract.jobspec import JobSpec
from tools.catalog import cached_groups, ensure_db
from tools.catalog.shapes import Shape, _hardware, shape_of
from tools.jobtime import build_workload
from tools.jobtime.batch.assess import assess_many
from tools.jobtime.topology import Assessment, assess
from tools.jobtime.workload import Workload

JOBS = [
    dict(model="llama-3.1-8b", method="lora"),
    dict(model="llama-3.1-8b", method="full_finetune", seq_len=8192, micro_batch_size=8),
    dict(model="llama-2-7b", method="full_finetune", micro_batch_size=6, gradient_checkpointing=False),
    dict(model="qwen2.5-7b", method="full_finetune", seq_len=32768, micro_batch_size=1, gradient_checkpointing=True),
    dict(model="llama-3-70b", method="qlora", seq_len=4096, micro_batch_size=4),
    dict(model="llama-3-70b", method="full_finetune", seq_len=2048),
    dict(model="mistral-7b", method="qlora", seq_len=1021),
    dict(model="gpt2", method="pretrain", micro_batch_size=16),
    dict(model="llama-3.2-1b", method="full_finetune", micro_batch_size=32),
]
"""Jobs whose searches take every branch (checked by test_the_jobs_take_every_branch)."""


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> list[Shape]:
    """Every one-node shape of the built-in catalog, and the 8-GPU ones on 2, 3 and 8 nodes."""
    path = ensure_db(tmp_path_factory.mktemp("catalog") / "catalog.sqlite")
    groups = cached_groups(str(path), Path(path).stat().st_mtime, None, None, None)
    found = dict.fromkeys(shape for _group, shape in groups)
    for group, _shape in groups:
        if group.offer.gpu_count >= 8:
            for nodes in (2, 3, 8):
                found.setdefault(shape_of(group.offer, nodes))
    return list(found)


def _fields(found: Assessment) -> tuple[object, ...]:
    """What the ranking reads from an assessment, and its explained result."""
    return (
        found.best,
        found.verdict,
        found.params,
        found.usable,
        found.single,
        found.runnable,
        found.result().model_dump(),
    )


def _compare(workload: Workload, shapes: list[Shape], overlap: bool = True) -> tuple[int, set[str]]:
    """Assess every shape both ways; (shapes the batch took, layouts chosen)."""
    found = [pair for shape in shapes if (pair := _hardware(shape)) is not None]
    batched = assess_many(workload, found, margin=0.1, overlap=overlap)
    taken, layouts = 0, set()
    for (candidate, hardware), fast in zip(found, batched, strict=True):
        slow = assess(workload, candidate, margin=0.1, overlap=overlap, hardware=hardware)
        layouts.add(str(slow.layout))
        if fast is None:
            continue
        taken += 1
        assert fast.options == slow.options  # every layout tried, from the arrays
        assert _fields(fast) == _fields(slow), (candidate, slow.layout)
    return taken, layouts


@pytest.mark.parametrize("job", JOBS, ids=lambda job: f"{job['model']}-{job['method']}")
def test_batch_search_matches_the_per_shape_search(job: dict[str, object], shapes: list[Shape]) -> None:
    """Same chosen layout, numbers, verdict and explained result on every catalog shape the batch takes."""
    workload = build_workload(JobSpec(language="en", **job))  # type: ignore[arg-type]
    taken, _layouts = _compare(workload, shapes)
    assert taken >= len(shapes) * 0.8


def test_without_overlap_too(shapes: list[Shape]) -> None:
    """The no-overlap communication model agrees as well."""
    workload = build_workload(JobSpec(language="en", **JOBS[1]))  # type: ignore[arg-type]
    assert _compare(workload, shapes, overlap=False)[0] > 0


def test_a_gpu_speed_unknown_in_the_precision_is_left_to_the_per_shape_search(shapes: list[Shape]) -> None:
    """FP32 has no dense tensor figure on most GPUs: those shapes come back None (the caller searches them one by
    one), and any the batch takes agree."""
    spec = JobSpec(language="en", model="llama-3.2-1b", method="full_finetune", precision="fp32")
    workload = build_workload(spec)
    taken, _layouts = _compare(workload, shapes)
    assert taken < len(shapes)


def test_the_jobs_take_every_branch(shapes: list[Shape]) -> None:
    """The jobs above reach every layout and the no-fit verdict, and some shape runs a shrunk micro-batch."""
    layouts: set[str] = set()
    shrunk = False
    for job in JOBS:
        workload = build_workload(JobSpec(language="en", **job))  # type: ignore[arg-type]
        for shape in shapes:
            pair = _hardware(shape)
            if pair is None:
                continue
            found = assess(workload, pair[0], margin=0.1, hardware=pair[1])
            layouts.add(str(found.layout))
            shrunk |= found.best is not None and found.best.micro_batch_size < workload.micro_batch_size
    assert {"single_gpu", "ddp", "zero2", "fsdp", "hsdp", "tensor_parallel", "None"} <= layouts
    assert shrunk


@settings(max_examples=40, deadline=None)
@given(
    seq=st.integers(min_value=128, max_value=65536),
    micro=st.integers(min_value=1, max_value=64),
    model=st.sampled_from(["llama-3.1-8b", "qwen2.5-14b", "llama-3-70b", "mistral-7b", "gpt2"]),
    method=st.sampled_from(["full_finetune", "lora", "qlora", "pretrain"]),
    checkpointing=st.sampled_from([None, True, False]),
)
def test_any_job_agrees(
    seq: int, micro: int, model: str, method: str, checkpointing: bool | None, shapes: list[Shape]
) -> None:
    """Random sequence lengths, micro-batches, models, methods and checkpointing: the two searches agree."""
    spec = JobSpec(
        language="en",
        model=model,
        method=method,
        seq_len=seq,
        micro_batch_size=micro,
        gradient_checkpointing=checkpointing,
    )
    _compare(build_workload(spec), shapes[::5])


def test_the_batch_keeps_no_step_or_memory_the_per_shape_search_does_not(shapes: list[Shape]) -> None:
    """Memory questions are kept per workload for its lifetime: the batch asks exactly the ones the per-shape search
    asks; its step computes are arrays of its own search, so it keeps none on the workload beyond what the per-shape
    search keeps (a batch that kept every GPU's step for every layout grew a serve process by ~30 MB over 1,200
    never-seen turns, benchmarks/turn_memory.py)."""
    for job in (JOBS[3], JOBS[4], JOBS[6]):
        workload = build_workload(JobSpec(language="en", **job))  # type: ignore[arg-type]
        batch, single = (replace(workload, memory_cache={}, slot_cache={}, compute_cache={}) for _ in range(2))
        found = [pair for shape in shapes if (pair := _hardware(shape)) is not None]
        assess_many(batch, found, margin=0.1)
        for candidate, hardware in found:
            assess(single, candidate, margin=0.1, hardware=hardware)
        assert set(batch.compute_cache) <= set(single.compute_cache)
        assert set(batch.memory_cache) == set(single.memory_cache)


def test_a_step_unknown_only_in_some_layouts_leaves_only_its_geometries_to_the_per_shape_search(
    shapes: list[Shape], monkeypatch: pytest.MonkeyPatch
) -> None:
    """When a GPU's micro-step is unknown at some tensor-parallel degree (the one-GPU check passed), the search over
    every shape at once stops; each geometry is then searched on its own, those that need the unknown step are left
    to the per-shape search, and every shape the batch takes still agrees with it."""
    import tools.jobtime.batch.shapes as batch_shapes

    known = batch_shapes.Steps.figures
    workload = build_workload(JobSpec(language="en", **JOBS[4]))  # 70B QLoRA: tensor parallelism on 8-GPU nodes
    unknown = {shape.gpu for shape in shapes if shape.gpus_per_node >= 8 and shape.interconnect == "nvlink"}
    assert unknown
    blind = sorted(unknown)[0]

    def partly_known(steps: batch_shapes.Steps, tp: int, ckpt: bool, micro: int) -> tuple[np.ndarray, np.ndarray]:
        """The step of every GPU but one, which is unknown beyond one GPU per replica."""
        seconds, utilisation = (array.copy() for array in known(steps, tp, ckpt, micro))
        if tp > 1:
            for row, gpu in enumerate(steps.gpus):
                if gpu.name == blind:
                    seconds[row] = utilisation[row] = np.nan
        return seconds, utilisation

    monkeypatch.setattr(batch_shapes.Steps, "figures", partly_known)
    taken, _layouts = _compare(workload, shapes)
    assert 0 < taken < len(shapes)
