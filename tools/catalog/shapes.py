"""Catalog rows grouped by hardware shape for ranking: the same instance at the same prices is costed once, and the
topology verdict of a shape (GPU, count, nodes, links, memory) is computed once per job and cached."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple, cast

from tools.catalog.query import Offer, query_offers
from tools.jobtime import (
    Assessment,
    Candidate,
    Hardware,
    JobTime,
    Tokens,
    Workload,
    assess,
    assess_many,
    hardware_of,
    holds_many,
    job_time,
    job_times,
)
from tools.lru import Lru


class Shape(NamedTuple):
    """The hardware facts topology and time depend on; offers with the same shape share one evaluation. A named
    tuple: shapes key the per-ranking and cross-turn caches (~5,000 lookups per new job), and a tuple's hash is
    computed in C, where a dataclass's runs a Python method on every lookup."""

    gpu: str
    form_factor: str | None
    gpus_per_node: int
    nodes: int
    interconnect: str
    nvlink_gbs: float | None
    vram_gib: float | None
    node_gbps: float | None
    fabric: str | None = None


class Evaluation(NamedTuple):
    """Topology verdict and job time for one shape (`topology.result()` explains the verdict)."""

    topology: Assessment | None
    time: JobTime | None
    error: str | None = None


def shape_of(offer: Offer, nodes: int) -> Shape:
    """Hardware shape of `nodes` copies of an offer."""
    node_gbps = offer.inter_node_gbps_per_gpu * offer.gpu_count if offer.inter_node_gbps_per_gpu else None
    interconnect = offer.interconnect if offer.interconnect in ("nvlink", "pcie") else "unknown"
    return Shape(
        gpu=offer.gpu,
        form_factor=offer.gpu_form_factor,
        gpus_per_node=offer.gpu_count,
        nodes=nodes,
        interconnect=interconnect,
        nvlink_gbs=offer.nvlink_gbs,
        vram_gib=offer.vram_gib_per_gpu,
        node_gbps=node_gbps,
        fabric=offer.inter_node_fabric,
    )


TOPOLOGY_JOBS_KEPT = 20
"""Jobs whose topology verdicts are kept (a new job checks ~285 shapes; ~12 KB each): 20,000 verdicts held ~250 MB
of a serve process (benchmarks/turn_memory.py), ~20 jobs' worth is what follow-ups and recurring jobs reuse."""
_TOPOLOGY: Lru[tuple[str, float], dict[Shape, Assessment | None]] = Lru(TOPOLOGY_JOBS_KEPT)
"""Topology per shape, one table per (estimator request, margin): a verdict depends on nothing else, so repeated
turns reuse it. Least recently used job first out, never the whole cache (a recurring job stays warm); one table per
job instead of a key per shape, so a never-seen job adds one key, not ~285."""


def workload_key(workload: Workload) -> str:
    """What the topology verdict depends on in a workload, as a cache key (compute once per ranking)."""
    return workload.request.model_dump_json() + repr(workload.checkpointing_optional)


_HELD: Lru[tuple[str, float], dict[Shape, bool]] = Lru(TOPOLOGY_JOBS_KEPT)
"""Whether memory holds the job per shape (`memory_holds`), one table per job like its verdicts: a follow-up or a
job asked again with another budget tries the same node counts."""


def held_of(key_text: str, margin: float) -> dict[Shape, bool]:
    """The kept answers of one job (key_text: workload_key of its workload) to whether memory holds it, per shape."""
    return _HELD.get_or_make((key_text, margin), dict)


def verdicts_of(key_text: str, margin: float) -> dict[Shape, Assessment | None]:
    """The kept topology verdicts of one job (key_text: workload_key of its workload) at one memory margin, per
    shape; filled by `assess_shapes` and `evaluate`."""
    return _TOPOLOGY.get_or_make((key_text, margin), dict)


def evaluate(
    shape: Shape, workload: Workload, tokens: Tokens, margin: float, verdicts: dict[Shape, Assessment | None]
) -> Evaluation:
    """Run the topology checker (its verdict kept in `verdicts`, the job's `verdicts_of`) and the time model for one
    shape."""
    topology = _verdict(shape, workload, margin, verdicts)
    if topology is None:
        return Evaluation(topology=None, time=None, error="invalid candidate")
    return Evaluation(topology, job_time(workload, topology, tokens))  # a few multiplications: not worth a cache


def evaluate_many(
    shapes: list[Shape], workload: Workload, tokens: Tokens, margin: float, verdicts: dict[Shape, Assessment | None]
) -> list[Evaluation]:
    """evaluate() of each shape, their times made at once (tools.jobtime.job_times)."""
    topologies = [_verdict(shape, workload, margin, verdicts) for shape in shapes]
    return [
        Evaluation(topology, time) if topology is not None else Evaluation(None, None, "invalid candidate")
        for topology, time in zip(topologies, job_times(workload, topologies, tokens), strict=True)
    ]


_MISSING = object()


def assess_shapes(
    shapes: Iterable[Shape], workload: Workload, margin: float, verdicts: dict[Shape, Assessment | None]
) -> None:
    """Put the topology of every shape not in `verdicts` yet (the job's `verdicts_of`) into it, the shapes of each GPU
    geometry searched at once (tools.jobtime.batch.search; the per-shape search for the rest): what `evaluate` then
    finds."""
    missing = [shape for shape in dict.fromkeys(shapes) if shape not in verdicts]
    usable = [(shape, found) for shape in missing if (found := _hardware(shape)) is not None]
    if not usable:
        return
    batched = assess_many(workload, [found for _shape, found in usable], margin=margin)
    for (shape, _found), assessment in zip(usable, batched, strict=True):
        verdicts[shape] = assessment or _check(shape, workload, margin)


def verdict_holds(topology: Assessment | None) -> bool:
    """Whether a shape's verdict holds the job in memory: a layout fits, or only one that needs NVLink would (what a
    ranking does not call does_not_fit)."""
    return topology is not None and (topology.runnable or topology.verdict == "needs_nvlink_node")


def memory_holds(
    shapes: Iterable[Shape],
    workload: Workload,
    margin: float,
    verdicts: dict[Shape, Assessment | None],
    held: dict[Shape, bool],
) -> None:
    """Put whether memory holds the job on each shape not in `held` yet into it: from per-GPU memory alone
    (tools.jobtime.holds_many) where that can tell, else from the shape's full verdict (searched into `verdicts`)."""
    missing = []
    for shape in dict.fromkeys(shapes):
        if shape in held:
            continue
        if shape in verdicts:  # searched in full already: its verdict tells
            held[shape] = verdict_holds(verdicts[shape])
        else:
            missing.append(shape)
    usable = [(shape, found) for shape in missing if (found := _hardware(shape)) is not None]
    answers = holds_many(workload, [found for _shape, found in usable], margin=margin)
    for (shape, _found), answer in zip(usable, answers, strict=True):
        if answer is not None:
            held[shape] = answer
    rest = [shape for shape in missing if shape not in held]
    assess_shapes(rest, workload, margin, verdicts)
    for shape in rest:
        held[shape] = verdict_holds(_verdict(shape, workload, margin, verdicts))


def _verdict(
    shape: Shape, workload: Workload, margin: float, verdicts: dict[Shape, Assessment | None]
) -> Assessment | None:
    """The shape's kept verdict, else the per-shape check's, kept (a shape the batch search did not take)."""
    found = verdicts.get(shape, _MISSING)
    if found is _MISSING:
        found = verdicts[shape] = _check(shape, workload, margin)
    return cast(Assessment | None, found)


def _check(shape: Shape, workload: Workload, margin: float) -> Assessment | None:
    """Topology verdict for one shape; None when the shape itself is inconsistent."""
    found = _hardware(shape)
    if found is None:
        return None
    try:
        return assess(workload, found[0], margin=margin, hardware=found[1])
    except ValueError:
        return None


@lru_cache(maxsize=8192)
def _hardware(shape: Shape) -> tuple[Candidate, Hardware] | None:
    """The shape as a topology candidate and its hardware (GPU spec, links), the same for every job; None when the
    shape is inconsistent (an unknown GPU without a memory size, a count that does not split into its nodes)."""
    try:
        candidate = Candidate(
            gpu=shape.gpu,
            form_factor=shape.form_factor,
            gpu_count=shape.gpus_per_node * shape.nodes,
            gpus_per_node=shape.gpus_per_node,
            interconnect=shape.interconnect,  # type: ignore[arg-type]
            nvlink_gbs=shape.nvlink_gbs,
            inter_node_gbps=shape.node_gbps,
            inter_node_fabric=shape.fabric,
            vram_gib=shape.vram_gib,
        )
        return candidate, hardware_of(candidate)
    except ValueError:
        return None


def effective_prices(offer: Offer) -> tuple[float | None, float | None]:
    """(on-demand, interruptible) USD/hour as they should be treated: a provider's market/auction price shown as
    on-demand is interruptible, never on-demand (tools.catalog.offer's on_demand_is_market)."""
    if getattr(offer, "on_demand_is_market", False):
        return None, offer.spot_price_per_hour or offer.price_per_hour
    return offer.price_per_hour, offer.spot_price_per_hour


@dataclass(frozen=True, kw_only=True)
class OfferGroup:
    """Catalog rows costed as one: a representative offer, how many rows it stands for, and every region where the
    same instance is offered at the same prices."""

    offer: Offer
    count: int
    regions: tuple[str, ...]
    other_zones: int = 0
    """Rows of the same instance in the offer's region at other prices that no candidate stands for."""
    on_demand: float | None = field(init=False, default=None)
    """effective_prices(offer), computed once: groups are cached across turns and costed on every turn."""
    interruptible: float | None = field(init=False, default=None)
    outlier: str | None = field(init=False, default=None)
    """The offer's price_outlier flag (tools.ranking.headline reads it for every eligible offer)."""
    listing_key: tuple[Any, ...] = field(init=False, default=())
    """(provider, instance, region): offers listed once per key, node count and billing model."""
    one_node_keys: tuple[tuple[Any, ...], tuple[Any, ...]] = field(init=False, default=((), ()))
    """(listing_key, 1, False) and (listing_key, 1, True): the listing keys of one node on demand and on spot."""

    def __post_init__(self) -> None:
        """Fill the per-offer facts the ranking reads on every turn."""
        on_demand, interruptible = effective_prices(self.offer)
        object.__setattr__(self, "on_demand", on_demand)
        object.__setattr__(self, "interruptible", interruptible)
        object.__setattr__(self, "outlier", getattr(self.offer, "price_outlier", None))
        listing = (self.offer.provider, self.offer.instance_type, self.offer.region)
        object.__setattr__(self, "listing_key", listing)
        object.__setattr__(self, "one_node_keys", ((listing, 1, False), (listing, 1, True)))


def _group(offers: list[Offer], count: int | None = None) -> OfferGroup:
    """A group of identical offers (first one representative)."""
    return OfferGroup(
        offer=offers[0],
        count=len(offers) if count is None else count,
        regions=tuple(dict.fromkeys(o.region for o in offers if o.region)),
    )


@lru_cache(maxsize=64)
def cached_groups(
    path: str, mtime: float, gpu: str | None, providers: tuple[str, ...] | None, regions: tuple[str, ...] | None
) -> tuple[tuple[OfferGroup, Shape], ...]:
    """Every catalog row matching the user's wishes, grouped so that the same instance at the same prices in many
    zones is costed once (the compare table costs every offer); cached per database file version. Each group comes
    with its one-node shape. Grows with the catalog: the chat uses `candidate_groups`."""
    same: dict[tuple[Any, ...], list[Offer]] = {}
    for offer in query_offers(path, gpu=gpu, providers=providers, regions=regions):
        same.setdefault(
            (
                offer.provider,
                offer.instance_type,
                offer.price_per_hour,
                offer.spot_price_per_hour,
                offer.gpu,
                offer.gpu_form_factor,
                offer.gpu_count,
                offer.vram_gib_per_gpu,
                offer.interconnect,
                offer.nvlink_gbs,
                offer.inter_node_gbps_per_gpu,
                getattr(offer, "on_demand_is_market", False),
                getattr(offer, "price_outlier", None),
            ),
            [],
        ).append(offer)
    return tuple((_group(group), shape_of(group[0], 1)) for group in same.values())


def candidate_groups(
    path: str, mtime: float, gpu: str | None, providers: tuple[str, ...] | None, regions: tuple[str, ...] | None
) -> tuple[tuple[OfferGroup, Shape], ...]:
    """The cheapest on-demand and the cheapest interruptible row per (provider, instance, hardware, price trust),
    chosen in SQL; cached per database file version. Their number depends on the catalog's shapes, not on its size."""
    from tools.catalog.candidates import candidate_rows

    return _cached_candidates(path, mtime, gpu, providers, regions, candidate_rows)


@lru_cache(maxsize=64)
def _cached_candidates(
    path: str,
    mtime: float,
    gpu: str | None,
    providers: tuple[str, ...] | None,
    regions: tuple[str, ...] | None,
    reader: Any,
) -> tuple[tuple[OfferGroup, Shape], ...]:
    """candidate_groups, memoised; equal shapes are one object, so the per-turn shape caches match by identity."""
    shapes: dict[Shape, Shape] = {}
    return tuple(
        (
            OfferGroup(offer=offer, count=count, regions=found, other_zones=others),
            shapes.setdefault(shape := shape_of(offer, 1), shape),
        )
        for offer, count, found, others in reader(path, gpu=gpu, providers=providers, regions=regions)
    )


def clear_shape_caches() -> None:
    """Forget cached catalog groups and topology verdicts."""
    cached_groups.cache_clear()
    _cached_candidates.cache_clear()
    _hardware.cache_clear()
    _TOPOLOGY.clear()
    _HELD.clear()
