"""Tool calls behind the questions a job thread may ask: the fit on the user's card, a GPU-count comparison, and a
ranking that still answers when the spot model cannot take the job (very long jobs run on-demand)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agent.graph.rankings import copied, remembered
from agent.writing import same_rental
from contract.jobspec import JobSpec
from tools.jobtime import DEFAULT_MEMORY_MARGIN
from tools.memory import estimate_for_spec

FIT_CHECK_GPU = "H100"
"""Single-card reference when the user names no GPU and no card size: the common 80 GB class."""
GB_TO_GIB = 1e9 / 2**30
SAME_CARD_SHARE = 0.05
"""An offer is the user's card when its memory is within this share (a 48 GB RTX4090 is not 'my 4090')."""


def family_sizes(gpu: str | None) -> list[str]:
    """The memory sizes a bare family name means, smallest first ('A100' -> A100-40GB, A100-80GB); else [gpu]."""
    from tools.gpus import gpu_family_names, lookup_gpu

    names = gpu_family_names(gpu) if gpu else []
    if len(names) < 2:
        return [gpu] if gpu else []
    return sorted(names, key=lambda name: getattr(lookup_gpu(name), "memory_gib", 0) or 0)


def feasibility(spec: JobSpec, offered: tuple[str, ...] = ()) -> dict[str, Any]:
    """Whether the job fits the user's hardware (card size or named GPU, count), with the fixes that would fit. The
    cards a question offers are tried from the smallest: a bare family's sizes ("an A100", issue 10), a card size
    smaller than the named GPU and the other GPUs the message names beside it ("is a 48 GB card enough, or do I need
    an H100?", "do I need an H100 or is an L40S enough?"). The answer is for the smallest that holds the job, naming
    those too small, else for the largest."""
    cards = offered_cards(spec, offered)
    tried: list[str | None] = []
    for gpu in cards[:-1]:
        fit = _feasibility(spec, gpu)
        if fit["fits"]:
            return _too_small(fit, tried)
        tried.append(gpu)
    last = _feasibility(spec, cards[-1] if cards else None)
    return _too_small(last, tried if last["fits"] else [])


def offered_cards(spec: JobSpec, offered: tuple[str, ...] = ()) -> list[str | None]:
    """The cards a fit question is about, smallest first: the sizes of the named GPU and of the other GPUs `offered`,
    and None for the user's card size where it is smaller than all of them (an 'H100 80GB' is one card)."""
    from tools.gpus import lookup_gpu

    names = list(dict.fromkeys(name for gpu in (spec.gpu, *offered) if gpu for name in family_sizes(gpu)))
    memory = {name: getattr(lookup_gpu(name), "memory_gib", 0) or 0 for name in names}
    cards: list[str | None] = list(sorted(names, key=memory.__getitem__))
    size = spec.gpu_memory_gb * GB_TO_GIB if spec.gpu_memory_gb else None
    if size and (not names or size < (1 - 2 * SAME_CARD_SHARE) * min(memory.values())):
        cards.insert(0, None)
    return cards


def _too_small(fit: dict[str, Any], tried: list[str | None]) -> dict[str, Any]:
    """The fit with the smaller cards tried before it: GPU names, and whether the user's card size was one."""
    return fit | {"too_small": [gpu for gpu in tried if gpu], "too_small_card": None in tried}


def _feasibility(spec: JobSpec, named: str | None) -> dict[str, Any]:
    """The fit on one named GPU (or the user's card size, or the reference card)."""
    count = spec.num_gpus or 1
    vram_gib = spec.gpu_memory_gb * GB_TO_GIB if spec.gpu_memory_gb and not named else None
    gpu = named or (None if vram_gib else FIT_CHECK_GPU)
    estimate = estimate_for_spec(
        spec, num_gpus=count, sharding="fsdp" if count > 1 else None, gpu=gpu, vram_gib=vram_gib
    )
    fit = estimate.fit
    vram = fit.vram_gib if fit else (vram_gib or 0.0)
    usable = (1 - DEFAULT_MEMORY_MARGIN) * vram
    fixes = [f.model_dump(mode="json") | {"fits": f.per_gpu_gib <= usable} for f in (fit.fixes if fit else [])]
    return {
        "needed_gib": estimate.per_gpu_gib,
        "vram_gib": vram,
        "usable_gib": usable,
        "fits": estimate.per_gpu_gib <= usable,
        "fixes": fixes,
        "gpu": gpu,
        "card_gb": spec.gpu_memory_gb,
        "num_gpus": count,
        "micro_batch_size": spec.micro_batch_size,
        "unknown_model": getattr(estimate, "unknown_model", None),
    }


def ranked(
    spec: JobSpec, db_path: Path, prefer: str | None, *, public: bool = False
) -> tuple[dict[str, Any], list[str]]:
    """The caller's own copy of the ranking as JSON (texts made public with `public`), the preferred offer first; a
    job too long for the spot model is ranked on-demand."""
    kept, notes = remembered(spec, db_path, lambda: _ranked_now(spec, db_path), public=public)
    return copied(_preferred_first(kept, prefer)), list(notes)


def _preferred_first(kept: dict[str, Any], prefer: str | None) -> dict[str, Any]:
    """The ranking with the preferred offer first: a new top-level dict over the kept values, never changing them."""
    ranking = dict(kept)
    first = ranking.get({"speed": "fastest", "cost": "cheapest_that_fits"}.get(prefer or "", ""))
    if first:
        ranking["offers"] = [first] + [o for o in ranking["offers"] if not same_rental(o, first)]
    return ranking


def _ranked_now(spec: JobSpec, db_path: Path, shown: int | None = None) -> tuple[dict[str, Any], list[str]]:
    """The ranking as JSON, computed (`shown`: offers listed, when not the ranking's default); a job too long for the
    spot model ranked on-demand (with a note)."""
    from tools.ranking import rank_offers

    limit = {} if shown is None else {"limit": shown}
    try:
        return rank_offers(spec, db_path=db_path, **limit).model_dump(mode="json"), []
    except (ValidationError, ValueError, OverflowError):
        if spec.interruptible_ok is False:
            raise
        on_demand = spec.model_copy(update={"interruptible_ok": False})
        return rank_offers(on_demand, db_path=db_path, **limit).model_dump(mode="json"), ["on_demand_only_long_job"]


COMPARED_OFFERS = 1
"""Offers a GPU-count comparison's ranking lists: it answers with the best one (the cheapest and the fastest, which
a preference may put first, come with every ranking), so the others are never explained."""


def comparison(spec: JobSpec, count: int, db_path: Path, prefer: str | None) -> dict[str, Any]:
    """The best offer with `count` GPUs for the same job (None when no offer with that count can run it)."""
    other = spec.model_copy(update={"num_gpus": count})
    kept, _ = remembered(other, db_path, lambda: _ranked_now(other, db_path, COMPARED_OFFERS), shown=COMPARED_OFFERS)
    offers = _preferred_first(kept, prefer).get("offers") or []
    return {"num_gpus": count, "offer": copied(offers[0]) if offers else None}  # a copy of that offer only


def reconciled(fit: dict[str, Any], offers: list[dict[str, Any]]) -> dict[str, Any]:
    """The fit as the ranking sees it when it found a layout on exactly the user's GPUs (its per-GPU figure wins, so
    the yes/no and the rental it names tell one story), with the micro-batch it lowered to fit, if it did; where the
    plan uses more than the job needs (checkpointing off, since the card has room), the need stays the estimate's
    and the plan's figure is kept beside it (plan_gib)."""
    if not fit.get("gpu"):
        return fit
    same = next(
        (
            o
            for o in offers
            if o["gpu"] == fit["gpu"]
            and o["total_gpus"] == fit["num_gpus"]
            and o["fits"]
            and o.get("per_gpu_gib")
            and abs((o.get("vram_gib_per_gpu") or 0) - fit["vram_gib"]) <= SAME_CARD_SHARE * fit["vram_gib"]
        ),
        None,
    )
    if same is None:
        return fit
    if fit["fits"] and same["per_gpu_gib"] > fit["needed_gib"]:  # the plan spends spare memory on speed
        return fit | {"layout": same.get("layout"), "plan_gib": same["per_gpu_gib"]}
    found = fit | {"fits": True, "needed_gib": same["per_gpu_gib"], "layout": same.get("layout")}
    micro = (same.get("settings") or {}).get("micro_batch_size")
    if micro and fit.get("micro_batch_size") and micro < fit["micro_batch_size"]:  # the planner lowered it to fit
        found |= {"lowered_micro": micro, "stated_needed_gib": fit["needed_gib"]}
    return found
