"""Issue 24, scale-out for memory and the memory prefilter: a job too big for one node is planned on as many nodes
as it needs (up to the planning cap), and the prefilter never drops a shape some layout fits. Real SQLite
catalogs; expected figures from the raw catalog rows and hand arithmetic."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from contract.jobspec import JobSpec
from tools.catalog.query import Offer, build_db
from tools.jobtime.topology import Candidate, build_workload, check_topology
from tools.memory.estimator import request_for_spec
from tools.ranking.rank import clear_cache, rank_offers
from tools.ranking.scale_out import MAX_NODES, fewest_nodes, memory_floor_gib

GIB = 1024**3


def offer_from_row(instance: str, gpu: str, count: int, vram: float, price: float, spot: float | None = None) -> Offer:
    """One catalog row with an NVLink node and a 3.2 Tb/s fabric (400 Gb/s per GPU, as AWS p5)."""
    return Offer(
        provider="aws",
        instance_type=instance,
        region="us-east-1",
        gpu=gpu,
        gpu_count=count,
        vram_gib_per_gpu=vram,
        price_per_hour=price,
        spot_price_per_hour=spot,
        interconnect="nvlink" if count > 1 else "none",
        inter_node_gbps_per_gpu=400.0 if count >= 8 else None,
        source="test:1",
        snapshot_date="2026-11-29",
    )


def _catalog(tmp_path: Path, offers: list[Offer]) -> Path:
    """A real catalog database."""
    clear_cache()
    return build_db(tmp_path / "catalog.sqlite", offers, {"source": "test"})


def test_fewest_nodes_finds_the_threshold_by_bisection() -> None:
    """For every threshold k in [2, cap] the answer is k, in at most 2 + log2(cap) probes; beyond the cap None."""
    for k in range(2, MAX_NODES + 3):
        calls: list[int] = []

        def fits(n: int, k: int = k) -> bool:
            calls.append(n)  # noqa: B023  (called inside this iteration)
            return n >= k

        found = fewest_nodes(fits)
        assert found == (k if k <= MAX_NODES else None)
        assert len(calls) <= 2 + 5  # log2(32) = 5


def test_405b_full_fine_tuning_gets_a_multi_node_plan(tmp_path: Path) -> None:
    """Llama 3.1 405B (405.85e9 parameters) with AdamW in mixed precision keeps >= 16 bytes per parameter of model
    state (fp32 weights 4 + fp32 gradients 4 + two Adam moments 8): 6,494 GB = 6,048 GiB. One 8x H200 node holds
    8 x 140.4 x 0.95 = 1,067 GiB usable, so at least ceil(6,048 / 1,067) = 6 nodes; the plan must be multi-node with
    6..32 nodes (before issue 24 it stopped at 4 nodes and said 'memory')."""
    state_gib = 16 * 405.85e9 / GIB
    assert round(state_gib) == 6048
    min_nodes = -(-state_gib // (8 * 140.4 * 0.95))
    assert min_nodes == 6
    db = _catalog(tmp_path, [offer_from_row("p5en.48xlarge", "H200", 8, 140.4, 8 * 5.0)])
    spec = JobSpec(
        language="en",
        model="llama-3.1-405b",
        method="full_finetune",
        dataset_tokens=100_000_000,
        interruptible_ok=False,
    )
    result = rank_offers(spec, db_path=db, limit=3)
    assert result.binding_limit is None and result.offers
    top = result.offers[0]
    assert min_nodes <= top.nodes <= MAX_NODES and top.total_gpus == 8 * top.nodes
    assert top.per_gpu_gib is not None and top.per_gpu_gib <= 140.4 * 0.95
    # the fewest nodes that hold it: one node fewer, asked for explicitly, does not fit
    fewer = rank_offers(spec.model_copy(update={"num_gpus": 8 * (top.nodes - 1)}), db_path=db, limit=1)
    assert not fewer.offers and fewer.binding_limit == "memory"


def test_qwen7b_on_four_h100_is_not_dropped_by_the_prefilter(tmp_path: Path) -> None:
    """Qwen2.5-7B has 28 attention heads and 4 key-value heads: tensor parallel 8 does not divide them, 4 does. A
    4x H100 node (raw row: 79.65 GiB per GPU) must be costed, not dropped as 'too little memory' (issue 24: the
    prefilter tried only the largest degree)."""
    db = _catalog(tmp_path, [offer_from_row("4xH100", "H100", 4, 79.65, 4 * 2.5)])
    spec = JobSpec(
        language="en",
        model="qwen2.5-7b",
        method="full_finetune",
        micro_batch_size=8,
        gradient_checkpointing=False,
        num_gpus=4,
        gpu="H100",
        dataset_tokens=20_000_000,
    )
    result = rank_offers(spec, db_path=db, limit=1)
    assert "too_little_vram" not in result.excluded
    assert result.offers and result.offers[0].total_gpus == 4


@settings(max_examples=25, deadline=None)
@given(
    model=st.sampled_from(["qwen2.5-7b", "llama-3.1-8b", "llama-3.2-1b", "mistral-7b"]),
    method=st.sampled_from(["full_finetune", "lora", "qlora"]),
    micro=st.sampled_from([1, 4, 16]),
    ckpt=st.booleans(),
    gpus=st.sampled_from([1, 2, 4, 8]),
)
def test_memory_floor_is_a_lower_bound_on_every_layout(
    model: str, method: str, micro: int, ckpt: bool, gpus: int
) -> None:
    """No layout the topology check tries on up to 8 GPUs of one node needs less memory per GPU than the floor the
    ranking uses (at micro-batch 1: a layout may lower the stated micro-batch to fit)."""
    spec = JobSpec(language="en", model=model, method=method, micro_batch_size=micro, gradient_checkpointing=ckpt)
    request, _ = request_for_spec(spec)
    floor = memory_floor_gib(request.model_copy(update={"micro_batch_size": 1}), 8, 8)
    result = check_topology(build_workload(spec), Candidate(gpu="H100", gpu_count=gpus, interconnect="nvlink"))
    assert all(option.per_gpu_gib >= floor - 1e-9 for option in result.options)


def test_one_node_without_deadline_margin_is_also_planned_on_more_nodes() -> None:
    """23.3 h on one node against 24 h: 23.3 x 1.1 = 25.6 h > 24, so 2 nodes are tried (ceil(25.6 / 24) = 2);
    20 h (22 h with the headroom) needs none."""
    from tools.ranking.scale_out import deadline_nodes

    assert deadline_nodes(23.3, 24.0, 8) == 2
    assert deadline_nodes(20.0, 24.0, 8) is None
    assert deadline_nodes(23.3, 24.0, 4) is None  # 4-GPU instances are not clustered


def test_a_multi_node_plan_that_meets_the_deadline_without_margin_is_tried_larger() -> None:
    """7 nodes for 661 h against 720 h: on time but without the 10 % margin (661 x 1.1 = 727), so a larger count is
    tried (7 x 661 / 720 x 1.1 = 7.07: 8 nodes); with margin (600 h) none is."""
    from tools.ranking.scale_out import rescale_nodes

    assert rescale_nodes(7, 661.0, 720.0) == 8
    assert rescale_nodes(7, 600.0, 720.0) is None
