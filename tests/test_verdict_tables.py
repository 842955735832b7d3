"""Topology verdicts are kept one table per job across turns: a job ranked again searches nothing, the least recently
ranked job leaves first once TOPOLOGY_JOBS_KEPT are kept, and a never-seen job selects its candidates from the shared
candidate tuples (issue 27: what a new job leaves behind for the garbage collector)."""

from __future__ import annotations

import numpy as np
import pytest

import tools.catalog.shapes as shapes
from contract.jobspec import JobSpec
from tools.catalog import candidate_groups, ensure_db, verdicts_of, workload_key
from tools.jobtime import build_workload, shape_workload
from tools.jobtime.topology import DEFAULT_MEMORY_MARGIN
from tools.ranking.plans import clear_plans, makes_count, nodes_for
from tools.ranking.rank import _candidates, _with_memory, clear_cache, rank_offers


def _job(seq: int) -> JobSpec:
    """A QLoRA job whose sequence length makes it a new memory question."""
    return JobSpec(language="en", model="qwen2.5-14b", method="qlora", seq_len=seq, dataset_tokens=20_000_000)


def _table(spec: JobSpec) -> dict:
    """The kept verdict table of a job at the default margin."""
    return verdicts_of(workload_key(build_workload(spec)), DEFAULT_MEMORY_MARGIN)


@pytest.fixture()
def searches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the shapes sent to the batch search and to the per-shape search."""
    clear_cache()
    counted: list[int] = []
    batch, single = shapes.assess_many, shapes._check

    def counting_batch(workload, found, **kwargs):  # type: ignore[no-untyped-def]
        counted.append(len(found))
        return batch(workload, found, **kwargs)

    def counting_single(shape, workload, margin):  # type: ignore[no-untyped-def]
        counted.append(1)
        return single(shape, workload, margin)

    monkeypatch.setattr(shapes, "assess_many", counting_batch)
    monkeypatch.setattr(shapes, "_check", counting_single)
    yield counted
    clear_cache()


def test_a_job_ranked_again_searches_nothing(searches: list[int]) -> None:
    db = ensure_db()
    first = rank_offers(_job(1111), db_path=db)
    assert sum(searches) > 100, "a new job searches its shapes"
    kept = _table(_job(1111))
    assert len(kept) > 100, "the job's verdicts are kept in its table"
    searches.clear()
    clear_plans()  # the plans are costed again; the verdicts come from the job's table
    again = rank_offers(_job(1111), db_path=db)
    assert searches == []
    assert again.model_dump() == first.model_dump()


def test_the_same_job_at_another_gpu_count_resolves_no_new_workload(monkeypatch: pytest.MonkeyPatch) -> None:
    import tools.jobtime.workload as workloads

    clear_cache()
    db = ensure_db()
    job = _job(1177)
    rank_offers(job, db_path=db)
    resolved: list[object] = []
    resolve = workloads._resolve
    monkeypatch.setattr(workloads, "_resolve", lambda *args: resolved.append(args) or resolve(*args))
    for count in (2, 8, 16):
        ranking = rank_offers(job.model_copy(update={"num_gpus": count}), db_path=db)
        assert f"sharding not given: FSDP full sharding over the {count} GPUs assumed" in ranking.assumptions
        assert all(offer.total_gpus == count for offer in ranking.offers)
    assert resolved == [], "a GPU count is each shape's own: the job's workload is the one already resolved"


def test_least_recently_ranked_job_leaves_first(searches: list[int]) -> None:
    db = ensure_db()
    rank_offers(_job(1200), db_path=db)
    kept = shapes.TOPOLOGY_JOBS_KEPT
    for index in range(kept - 1):
        rank_offers(_job(1300 + index), db_path=db)
    assert len(_table(_job(1200))) > 0, "still kept after TOPOLOGY_JOBS_KEPT - 1 other jobs"
    for index in range(kept):
        rank_offers(_job(2300 + index), db_path=db)
    assert len(shapes._TOPOLOGY) == kept
    assert _table(_job(1300)) == {}, "the oldest job's table is gone (an empty one is made on asking)"


def test_new_floors_select_the_shared_candidate_tuples() -> None:
    clear_cache()
    db = ensure_db()
    path, mtime = str(db), db.stat().st_mtime
    found = _candidates(candidate_groups, path, mtime, None, None, None)
    every, considered = found.items, found.considered
    low_kept, considered_low, _, none = _with_memory(found, 10.0, None)
    high_kept, _, too_small, _ = _with_memory(found, 70.0, None)
    low, high = low_kept.items, high_kept.items
    assert none == 0, "no GPU count wished: none mismatched"
    assert considered_low == considered and 0 < len(high) < len(low) <= len(every)
    ids = {id(item) for item in every}
    assert all(id(item) in ids for item in low + high)
    assert all((item[0].offer.vram_gib_per_gpu or 0) >= 70.0 for item in high)
    assert too_small == considered - sum(group.count for group, _, _ in high)


def test_a_wished_gpu_count_selects_the_candidates_that_can_make_it() -> None:
    clear_cache()
    db = ensure_db()
    found = _candidates(candidate_groups, str(db), db.stat().st_mtime, None, None, None)
    every = _with_memory(found, 10.0, None)[0].items
    for wanted in (1, 2, 4, 8, 16, 24, 32):
        selection, _, _, mismatched = _with_memory(found, 10.0, wanted)
        kept = selection.items
        makes = [item for item in every if nodes_for(item[0].offer, wanted) is not None]
        assert kept == tuple(makes), f"{wanted} GPUs: the candidates nodes_for can place, in order"
        assert mismatched == sum(group.count for group, _, _ in every if nodes_for(group.offer, wanted) is None)
        assert mismatched > 0, "every count leaves some offer out"


def test_makes_count_is_nodes_for_over_an_array() -> None:
    from types import SimpleNamespace

    gpus = np.arange(0, 65)
    for wanted in range(1, 300):
        expected = [nodes_for(SimpleNamespace(gpu_count=int(g)), wanted) is not None for g in gpus]  # type: ignore[arg-type]
        assert makes_count(gpus, wanted).tolist() == expected, wanted


def test_scale_out_counts_are_searched_in_step_with_the_same_plans(searches: list[int], monkeypatch) -> None:
    """A job one node cannot hold on most 8-GPU offers: the node counts fewest_nodes tries are searched in step
    beforehand (batches), so far fewer shapes go through the per-shape search, and every plan is the same."""
    import tools.ranking.plans as plans

    db = ensure_db()
    job = JobSpec(language="en", model="llama-3-70b", method="full_finetune", seq_len=4096, dataset_tokens=20_000_000)
    per_shape: list[int] = []
    single = shapes._check

    def counting(shape, workload, margin):  # type: ignore[no-untyped-def]
        per_shape.append(1)
        return single(shape, workload, margin)

    monkeypatch.setattr(shapes, "_check", counting)
    stepped = rank_offers(job, db_path=db).model_dump()
    with_prefill = len(per_shape)
    clear_cache()
    per_shape.clear()
    monkeypatch.setattr(plans, "prefill_scale_out", lambda groups, memo: None)
    alone = rank_offers(job, db_path=db).model_dump()
    assert alone == stepped
    assert len(per_shape) > 20, "the job is planned on several nodes (fewest_nodes ran)"
    assert with_prefill * 4 < len(per_shape)


def test_fewest_nodes_finds_the_threshold_for_every_threshold() -> None:
    """fewest_nodes (now driving node_bisection) returns the least count in [2, MAX_NODES] that holds, or None."""
    from tools.ranking.scale_out import MAX_NODES, fewest_nodes

    for threshold in range(MAX_NODES + 3):
        found = fewest_nodes(lambda n, t=threshold: n >= t)  # type: ignore[misc]
        assert found == (None if threshold > MAX_NODES else max(2, threshold))


@pytest.mark.parametrize("count", [2, 4, 8, 16])
def test_a_gpu_count_what_if_reuses_the_jobs_verdicts(searches: list[int], count: int) -> None:
    """ "And with N GPUs?" keeps the job's memory question: each shape's layouts set their own GPU count and
    sharding, so the verdicts of the shapes already searched are reused, and the ranking equals one made cold."""
    db = ensure_db()
    job = _job(1431)
    what_if = job.model_copy(update={"num_gpus": count})
    rank_offers(job, db_path=db)
    searched_before = set(_table(job))
    searches.clear()
    warm = rank_offers(what_if, db_path=db).model_dump()
    shared = set(verdicts_of(workload_key(shape_workload(what_if)), DEFAULT_MEMORY_MARGIN))
    assert searched_before <= shared, "the what-if reads the job's verdict table"
    assert sum(searches) == len(shared - searched_before), "only shapes the job never had are searched"
    clear_cache()
    assert rank_offers(what_if, db_path=db).model_dump() == warm


def test_floors_that_keep_the_same_candidates_share_one_selection() -> None:
    """Two floors between the same two memory sizes keep the same candidates, and get one Selection (what a
    never-seen job reuses); a floor above one of the sizes gets another, whose columns are its items' facts."""
    clear_cache()
    db = ensure_db()
    found = _candidates(candidate_groups, str(db), db.stat().st_mtime, None, None, None)
    sizes = sorted(set(np.unique(found.vram[~np.isnan(found.vram)]).tolist()))
    low, high = sizes[1], sizes[2]  # a floor in between keeps the candidates of `high` GiB and more
    first = _with_memory(found, low + (high - low) / 3, None)[0]
    second = _with_memory(found, low + 2 * (high - low) / 3, None)[0]
    other = _with_memory(found, low, None)[0]
    assert first is second
    assert other is not first and len(other.items) > len(first.items)
    for selection in (first, other):
        for place, (group, shape, gpus) in enumerate(selection.items):
            assert selection.shapes[selection.shape_at[place]] == shape
            assert selection.pairs[selection.pair_at[place]] == (selection.shape_at[place], group.offer.provider)
            assert selection.gpus[place] == gpus
            assert np.isnan(selection.on_demand[place]) == (group.on_demand is None)
            assert np.isnan(selection.interruptible[place]) == (group.interruptible is None)
        assert len(set(selection.shapes)) == len(selection.shapes)
