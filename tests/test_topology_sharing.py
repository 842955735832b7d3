"""The ranking's topology verdicts share work across candidate shapes (hardware and links kept per shape, memory and
traffic per GPU geometry, compute per GPU) and explain only what is shown: each must still equal a fresh
check_topology on a fresh Candidate with an empty workload, whatever order the shapes come in."""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contract.jobspec import JobSpec
from tools.catalog import candidate_groups, ensure_db, shape_of
from tools.catalog.shapes import _check
from tools.jobtime import Candidate, build_workload, check_topology
from tools.jobtime.workload import Workload

_DB = ensure_db()
_GROUPS = candidate_groups(str(_DB), _DB.stat().st_mtime, None, None, None)
SHAPES = list(dict.fromkeys(shape for _, shape in _GROUPS)) + list(
    dict.fromkeys(shape_of(g.offer, n) for g, _ in _GROUPS if g.offer.gpu_count >= 8 for n in (2, 3, 16))
)


def _fresh(workload: Workload) -> Workload:
    """The same workload with none of its per-layout caches filled."""
    return dataclasses.replace(workload, memory_cache={}, slot_cache={}, compute_cache={})


def _candidate(shape: object) -> Candidate:
    """A new Candidate for a catalog shape, built by hand."""
    s = shape
    return Candidate(
        gpu=s.gpu,  # type: ignore[attr-defined]
        form_factor=s.form_factor,  # type: ignore[attr-defined]
        gpu_count=s.gpus_per_node * s.nodes,  # type: ignore[attr-defined]
        gpus_per_node=s.gpus_per_node,  # type: ignore[attr-defined]
        interconnect=s.interconnect,  # type: ignore[attr-defined]
        nvlink_gbs=s.nvlink_gbs,  # type: ignore[attr-defined]
        inter_node_gbps=s.node_gbps,  # type: ignore[attr-defined]
        inter_node_fabric=s.fabric,  # type: ignore[attr-defined]
        vram_gib=s.vram_gib,  # type: ignore[attr-defined]
    )


def test_catalog_has_single_and_multi_node_shapes() -> None:
    """The property below runs over a real mix: one-node shapes of several sizes and multi-node ones."""
    assert len({s.gpus_per_node for s in SHAPES}) >= 4
    assert any(s.nodes > 1 for s in SHAPES)
    assert len(SHAPES) > 200


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    model=st.sampled_from(["llama-3.1-8b", "qwen2.5-14b", "llama-3-70b", "gpt2", "mixtral-8x7b", "llama-3.2-1b"]),
    method=st.sampled_from(["full_finetune", "lora", "qlora", "pretrain"]),
    seq_len=st.integers(128, 32768),
    micro=st.sampled_from([None, 1, 3, 8, 32]),
    checkpointing=st.sampled_from([None, True, False]),
    margin=st.sampled_from([0.05, 0.1, 0.3]),
)
def test_shared_verdicts_equal_fresh_checks(
    model: str, method: str, seq_len: int, micro: int | None, checkpointing: bool | None, margin: float
) -> None:
    """Every shape's verdict, explained, is byte-identical to one computed from scratch (shapes in reverse order)."""
    spec = JobSpec(
        model=model,
        method=method,
        seq_len=seq_len,
        micro_batch_size=micro,
        gradient_checkpointing=checkpointing,
        language="en",
    )
    workload = build_workload(spec)
    shared = [_check(shape, workload, margin) for shape in SHAPES]
    fresh = _fresh(workload)
    for shape, found in reversed(list(zip(SHAPES, shared, strict=True))):
        expected = check_topology(fresh, _candidate(shape), margin=margin)
        assert found is not None
        assert found.result().model_dump_json() == expected.model_dump_json(), shape
        assert (found.runnable, found.verdict, found.micro_batch_size, found.compute_s_per_step) == (
            expected.runnable,
            expected.verdict,
            expected.micro_batch_size,
            expected.compute_s_per_step,
        )
