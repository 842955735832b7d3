"""Rank catalog offers for a JobSpec by total job cost: memory first, then topology, then price and billing model.

For each offer: does the job fit (estimator per layout, with a stated margin), how long it takes (FLOPs / achievable
throughput, slowed by exposed communication, plus instance start, downloads, staging and checkpoint writes), what it
costs on demand and on spot (billing rounding and minimums, preemption risk, market prices treated as
interruptible), and whether it meets the budget, the deadline, the spot preference and the user's GPU/count/provider/
region wishes. A deadline one node cannot meet is planned on several nodes (tools.ranking.scale_out). The headline is the
simplest of the near-cheapest trusted offers (tools.ranking.headline); when nothing qualifies the binding limit is named.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter
from pathlib import Path
from typing import Any

import numpy as np

from contract.jobspec import JobSpec
from tools.catalog import (
    OfferGroup,
    Shape,
    cached_groups,
    candidate_groups,
    clear_shape_caches,
    current_meta,
    ensure_db,
    workload_key,
)
from tools.fx import FxTable, FxUsed, load_fx, to_usd
from tools.jobtime import (
    DEFAULT_MEMORY_MARGIN,
    Workload,
    job_tokens,
    layout_memory,
    overhead_assumptions,
    shape_workload,
)
from tools.lru import Lru
from tools.memory import request_for_spec
from tools.ranking.costing import (
    CHECKPOINT_WRITE_GBS,
    Costed,
    CostingJob,
    ShapeCosts,
    clear_kept_entries,
    kept_entries,
    on_demand_variant,
)
from tools.ranking.entries import build_entry
from tools.ranking.headline import advised, choose_headline, collapse_zones, is_outlier
from tools.ranking.plans import clear_plans, makes_count, plan_candidates, within_budget, within_caps
from tools.ranking.results import RankedOffer, RankingResult, Reason
from tools.ranking.scale_out import (
    MAX_NODES,
    MULTI_NODE_MIN_GPUS,
    binding_limit,
    memory_floor_gib,
)
from tools.ranking.selection import Selection, selection_of
from tools.ranking.spot_terms import RESTART_BASE_S, clear_costing_caches

__all__ = ["RankedOffer", "RankingResult", "Reason", "clear_cache", "prepare_candidates", "rank_offers"]

EVERY_OFFER_LIMIT = 1000
"""A caller asking for more entries than this wants every offer costed (the compare table)."""


def _vram_floor(workload: Workload, max_gpus: int, max_tp: int, margin: float, least: float) -> float:
    """Smallest memory per GPU any layout on up to `max_gpus` GPUs could get by with (prefilter for the query): a
    lower bound over every layout (tools.ranking.scale_out.memory_floor_gib), with the fit margin. `least`: the
    least memory of any candidate (GiB); once some layout fits in it every candidate of known memory passes, so the
    layouts left are not asked, and a figure at most `least` is returned (the same candidates pass as with the
    exact floor)."""
    key = (workload.request.model_dump_json(), max_gpus, max_tp, margin, least)
    found = _FLOORS.get(key)
    if found is None:
        # micro-batch 1: a layout may lower the stated micro-batch (with accumulation) to fit
        request = workload.request.model_copy(update={"micro_batch_size": 1})

        def memory(gpus: int, sharding: str, tp: int) -> float | None:
            """The layout's per-GPU GiB at micro-batch 1, from the memory questions the workload's searches asked."""
            return layout_memory(workload, gpus, sharding, tp, workload.gradient_checkpointing, 1)

        # a layout within `enough` passes every candidate: its figure scaled below stays under `least` (the 1e-9
        # is far wider than the rounding of the two operations between them)
        enough = least * (1.0 - margin) / 0.999 * (1.0 - 1e-9)
        floor = memory_floor_gib(request, max_gpus, max_tp, memory, enough=enough)
        found = _FLOORS.put(key, floor / (1.0 - margin) * 0.999)
    return found


_FLOORS: Lru[tuple[str, int, int, float, float], float] = Lru(1024)
"""_vram_floor per (estimator request, GPUs, tensor-parallel degree, margin, least candidate memory): a pure function
of them, reused across turns (least recently used out first)."""


@dataclass(frozen=True, eq=False)
class _Candidates:
    """The wished candidates, each with its one-node shape and GPU count; the catalog rows they stand for; and, per
    candidate, its GiB per GPU (NaN where unknown) and rows, for the floor's selection."""

    items: tuple[tuple[OfferGroup, Shape, int], ...]
    considered: int
    vram: np.ndarray
    rows: np.ndarray
    gpus: np.ndarray
    least_vram: float
    """The least GiB per GPU of any candidate (inf without one of known memory)."""
    most_per_node: int
    """The most GPUs one candidate instance has (1 without candidates). Compared and hashed by identity: `_candidates`
    keeps one per catalog version and wishes, and `_with_memory` is memoised per it and floor."""


@lru_cache(maxsize=64)
def _candidates(
    reader: Any,
    path: str,
    mtime: float,
    gpu: str | None,
    providers: tuple[str, ...] | None,
    regions: tuple[str, ...] | None,
) -> _Candidates:
    """The wished candidates (per catalog version and wishes: every job's candidates are a selection of these same
    tuples)."""
    wished = reader(path, mtime, gpu, providers, regions)
    vram = [g.offer.vram_gib_per_gpu for g, _ in wished]
    return _Candidates(
        items=tuple((g, shape, g.offer.gpu_count) for g, shape in wished),
        considered=sum(group.count for group, _ in wished),
        vram=np.array([np.nan if value is None else value for value in vram], dtype=float),
        rows=np.array([group.count for group, _ in wished], dtype=np.int64),
        gpus=np.array([group.offer.gpu_count for group, _ in wished], dtype=np.int64),
        least_vram=min((value for value in vram if value is not None), default=math.inf),
        most_per_node=max((group.offer.gpu_count for group, _ in wished), default=1),
    )


@lru_cache(maxsize=64)
def _with_memory(every: _Candidates, floor: float, wanted: int | None) -> tuple[Selection, int, int, int]:
    """The candidates with at least `floor` GiB per GPU that can make the `wanted` GPU count (None: any), the catalog
    rows considered, the rows left out for too little memory and, of the others, those whose GPUs cannot make the
    count (counted here, not planned one by one). Per candidates, floor and count: jobs on the same model share it;
    a never-seen job's floor selects from the shared candidate tuples, and gets the Selection of an earlier floor
    that kept the same ones."""
    kept = every.vram >= floor  # NaN (unknown memory) is never kept
    too_small = every.considered - int(every.rows[kept].sum())
    mismatched = 0
    if wanted is not None:
        makes = makes_count(every.gpus, wanted)
        mismatched = int(every.rows[kept & ~makes].sum())
        kept &= makes
    return _selected(every, kept.tobytes()), every.considered, too_small, mismatched


@lru_cache(maxsize=64)
def _selected(every: _Candidates, kept: bytes) -> Selection:
    """The Selection of the candidates whose byte in `kept` is 1 (per candidates and mask)."""
    chosen = np.flatnonzero(np.frombuffer(kept, dtype=bool)).tolist()
    return selection_of(tuple(map(every.items.__getitem__, chosen)))


def prepare_candidates(db_path: str | Path) -> int:
    """Read, for this version of the catalog file, the candidates every ranking on it starts from (no GPU, provider
    or region wished): what the first turn after a new version would otherwise wait for (~1 s at 1M offers). Returns
    how many there are."""
    path = Path(db_path).expanduser()
    return len(_candidates(candidate_groups, str(path), path.stat().st_mtime, None, None, None).items)


def _budget_usd(spec: JobSpec, fx_table: FxTable | None) -> tuple[float | None, FxUsed | None]:
    """The budget in USD and the conversion used (None for a USD budget or no budget)."""
    if spec.budget is None:
        return None, None
    if spec.budget.currency == "USD":
        return spec.budget.amount, None
    return to_usd(spec.budget.amount, spec.budget.currency, fx_table)


def _at_stated_micro_batch(
    plans: list[Costed], stated: int | None, excluded: Counter[str] | None = None
) -> list[Costed]:
    """The plans that run the micro-batch the user stated, when any does; all plans otherwise (a smaller
    micro-batch is the fallback, and its entry says so). Dropped plans are counted as 'micro_batch_too_large'."""
    if not stated:
        return plans
    kept = [c for c in plans if (c.topology.micro_batch_size or stated) >= stated]
    if not kept:
        return plans
    if excluded is not None and len(kept) < len(plans):
        ids = {id(c) for c in kept}
        excluded["micro_batch_too_large"] += sum(c.group.count for c in plans if id(c) not in ids)
    return kept


def _on_demand_beside(headline: Costed | None, fitting: list[Costed], memo: ShapeCosts) -> Costed | None:
    """When the headline is interruptible: the cheapest trusted plan on-demand (spot plans re-costed on-demand) that
    misses neither the budget nor the deadline, an advised layout first; None otherwise."""
    if headline is None or not headline.use_spot:
        return None
    plans = [
        c
        for c in (on_demand_variant(c, memo) for c in fitting)
        if c is not None and not is_outlier(c) and c.meets_budget is not False and c.meets_deadline is not False
    ]
    plans = [c for c in plans if advised(c)] or plans
    return min(plans, key=attrgetter("cost", "hours"), default=None)


RANKING_BLIND: set[str] = {"language"}
"""JobSpec fields no ranking reads (the conversation's language: a ranking's texts are the agent's to translate)."""


def ranking_key(spec: JobSpec, *, budget: bool = True) -> str:
    """The spec's fields a ranking reads, as JSON (without the budget: what its plans read): a job asked again in
    another language, or with another budget, keys the same."""
    return spec.model_dump_json(exclude=RANKING_BLIND if budget else {*RANKING_BLIND, "budget"})


def rank_offers(
    spec: JobSpec,
    *,
    db_path: str | Path | None = None,
    limit: int = 10,
    margin: float = DEFAULT_MEMORY_MARGIN,
    fx_rates: str | Path | None = None,
    preemption_rate_per_hour: float | None = None,
    every_offer: bool | None = None,
) -> RankingResult:
    """Offers for `spec`, headline first then by expected total job cost (an interruptible headline's best on-demand
    plan within budget and deadline second), with alternatives, exclusion counts and, when none qualifies, the
    binding limit.

    Costed are the candidates tools.catalog.candidates picks in SQL (per instance shape and provider, the cheapest
    on-demand and the cheapest interruptible row), so a turn costs the same at any catalog size; exclusion counts
    are per catalog row, a candidate counting for the rows it stands for. every_offer (default: when `limit` is
    over 1000, as for the compare table) costs every group of identically priced rows instead."""
    if limit < 0:
        raise ValueError("limit must be >= 0")
    if not 0 <= margin < 1:
        raise ValueError("memory margin must be a fraction between 0 and 1")
    workload = shape_workload(spec)  # less the GPU count: what every shape's layouts and the floor read
    assumed = workload.assumptions if spec.num_gpus is None else request_for_spec(spec)[1]  # the stated count's too
    tokens = job_tokens(spec, seq_len=workload.seq_len, total_params=workload.total_params)
    fx_table = load_fx(fx_rates) if spec.budget and spec.budget.currency != "USD" else None
    budget, fx_used = _budget_usd(spec, fx_table)
    path = Path(db_path).expanduser() if db_path else ensure_db()
    if not path.is_file():
        raise ValueError(f"catalog database not found: {path} (run `gpu-advisor catalog build`)")
    epoch_tokens = tokens.total / (spec.epochs or 1.0)
    job = CostingJob(
        spec=spec,
        workload=workload,
        tokens=tokens,
        margin=margin,
        budget=budget,
        rate=preemption_rate_per_hour,
        epoch_tokens=epoch_tokens,
        workload_key=workload_key(workload),
    )

    mtime = path.stat().st_mtime  # one catalog file version for the candidates and the kept plans
    reader = (
        cached_groups if (every_offer if every_offer is not None else limit > EVERY_OFFER_LIMIT) else candidate_groups
    )
    wishes = (spec.gpu, tuple(spec.providers or ()) or None, tuple(spec.regions or ()) or None)
    candidates = _candidates(reader, str(path), mtime, *wishes)
    per_node = candidates.most_per_node
    reach = max(per_node, MULTI_NODE_MIN_GPUS) * min(MAX_NODES, spec.max_nodes or MAX_NODES)
    max_gpus = spec.num_gpus or min(reach, spec.max_gpus or reach)  # the most GPUs a plan may have
    floor = _vram_floor(workload, max_gpus, per_node, margin, candidates.least_vram)
    selection, considered, too_small, mismatched = _with_memory(candidates, floor, spec.num_gpus)
    excluded: Counter[str] = Counter()
    if too_small:
        excluded["too_little_vram"] = too_small
    if mismatched:
        excluded["gpu_count_mismatch"] = mismatched

    version = (margin, preemption_rate_per_hour, str(path), mtime, reader.__name__)
    key = (ranking_key(spec, budget=False), *version)
    unwished = None  # the same job without its wished count: its one-node plans serve this count
    if spec.num_gpus is not None:
        unwished = (ranking_key(spec.model_copy(update={"num_gpus": None}), budget=False), *version)
    memo = ShapeCosts(job=job, shapes=kept_entries(job))
    planned = plan_candidates(key, selection, memo, unwished)  # a job asked before with another budget: its plans
    capped = within_caps(planned, spec.max_gpus, spec.max_nodes)  # "at most 4 GPUs", "one machine only"
    eligible, fitting = within_budget(capped, selection.items, budget, excluded)
    if planned.shapes is not memo.shapes:
        memo = ShapeCosts(job=job, shapes=planned.shapes)
    eligible, fitting = (
        _at_stated_micro_batch(eligible, spec.micro_batch_size, excluded),
        _at_stated_micro_batch(fitting, spec.micro_batch_size),
    )
    eligible.sort(key=attrgetter("cost", "hours"))
    ordered, headline = choose_headline(eligible, spec.deadline_hours)
    on_demand = _on_demand_beside(ordered[0] if ordered else None, fitting, memo)
    if on_demand is not None:  # shown second, beside the interruptible headline
        ordered = [ordered[0], on_demand, *(c for c in ordered[1:] if c is not on_demand)]
    top, listed = collapse_zones(ordered, limit)
    cheapest = min(fitting, key=attrgetter("cost", "hours"), default=None)
    fastest = min(fitting, key=attrgetter("hours", "cost"), default=None)
    limit_code, limit_params = binding_limit(fitting, dict(excluded), budget, spec.deadline_hours)
    meta = current_meta(path)
    assumptions = list(
        dict.fromkeys(
            [
                *tokens.assumptions,
                *assumed,
                f"fits means per-GPU estimate <= {1 - margin:.0%} of the offer's memory",
                "spot is chosen when allowed and its expected cost is lower and the deadline is met with 90 % probability",
                "a provider's market/auction price is treated as interruptible, never as on-demand",
                f"checkpoints written and reloaded at {CHECKPOINT_WRITE_GBS:g} GB/s; spot restart {RESTART_BASE_S:g} s plus "
                "the reload",
                *overhead_assumptions(),
                "among offers within 5 % (or $1) of the cheapest, the simplest leads (one node, fewer GPUs, on-demand) "
                "unless another near-tie, at least as safe, is both cheaper and faster",
                *(
                    [
                        "a plan that needs more than 1/1.1 of the deadline has no margin for estimate error: plans with margin "
                        "lead, and one node without it is also planned on more nodes"
                    ]
                    if spec.deadline_hours
                    else []
                ),
                "when the headline is interruptible, the cheapest on-demand plan within budget and deadline is listed "
                "second",
                "prices are the catalog snapshot's, in USD per instance-hour",
            ]
        )
    )
    if fx_used:
        assumptions.append(
            f"budget converted at 1 {fx_used.from_currency} = {fx_used.rate:.6g} USD ({fx_used.date}, {fx_used.source})"
        )

    built: dict[tuple[int, int], Any] = {}

    def entry(item: Costed | None, zones: int = 0) -> Any:
        """The explained entry of one plan (None for none), built once per plan and zone count: the cheapest, the
        fastest and the on-demand alternative are usually listed offers too."""
        if item is None:
            return None
        key = (id(item), zones)
        found = built.get(key)
        if found is None:
            found = built[key] = build_entry(item, spec, budget, fx_used, zones, workload.request)
        return found

    return RankingResult(
        offers=[entry(item, zones + item.group.other_zones) for item, zones in top],
        total_eligible=listed,
        cheapest_that_fits=entry(cheapest),
        fastest=entry(fastest),
        on_demand_alternative=entry(on_demand),
        excluded=dict(excluded),
        considered=considered,
        budget_usd=budget,
        fx=fx_used,
        deadline_hours=spec.deadline_hours,
        memory_margin=margin,
        model_id=workload.arch.id,
        method=workload.method,
        tokens=tokens.total,
        catalog={k: meta.get(k) for k in ("source", "snapshot_date", "built_from")},
        assumptions=assumptions,
        headline_reason=Reason(**headline) if headline else None,
        binding_limit=limit_code,
        binding_params=limit_params,
    )  # type: ignore[arg-type]


def clear_cache() -> None:
    """Forget cached catalog queries (tests and long-running processes after a catalog rebuild)."""
    clear_shape_caches()
    _FLOORS.clear()
    clear_costing_caches()
    clear_kept_entries()
    clear_plans()
    _with_memory.cache_clear()
    _selected.cache_clear()
    _candidates.cache_clear()
