"""Catalog rows grouped by hardware shape for ranking: the same instance at the same prices is costed once, and the
topology verdict of a shape (GPU, count, nodes, links, memory) is computed once per job and cached."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from tools.catalog import Offer, query_offers
from tools.job_time import JobTime, Tokens, job_time
from tools.topology import Candidate, TopologyResult, Workload, check_topology


@dataclass(frozen=True, kw_only=True)
class Shape:
    """The hardware facts topology and time depend on; offers with the same shape share one evaluation."""

    gpu: str
    form_factor: str | None
    gpus_per_node: int
    nodes: int
    interconnect: str
    nvlink_gbs: float | None
    vram_gib: float | None
    node_gbps: float | None
    fabric: str | None = None


@dataclass(frozen=True, kw_only=True)
class Evaluation:
    """Topology verdict and job time for one shape."""

    topology: TopologyResult | None
    time: JobTime | None
    error: str | None = None


def shape_of(offer: Offer, nodes: int) -> Shape:
    """Hardware shape of `nodes` copies of an offer."""
    node_gbps = offer.inter_node_gbps_per_gpu * offer.gpu_count if offer.inter_node_gbps_per_gpu else None
    interconnect = offer.interconnect if offer.interconnect in ("nvlink", "pcie") else "unknown"
    return Shape(gpu=offer.gpu, form_factor=offer.gpu_form_factor, gpus_per_node=offer.gpu_count, nodes=nodes,
                 interconnect=interconnect, nvlink_gbs=offer.nvlink_gbs, vram_gib=offer.vram_gib_per_gpu,
                 node_gbps=node_gbps, fabric=offer.inter_node_fabric)


_TOPOLOGY_CACHE: dict[tuple[str, float, Shape], TopologyResult | None] = {}
"""Topology per (estimator request, margin, shape): it depends on nothing else, so repeated turns reuse it."""
_TOPOLOGY_CACHE_MAX = 20_000


def evaluate(shape: Shape, workload: Workload, tokens: Tokens, margin: float) -> Evaluation:
    """Run the topology checker (cached) and the time model for one shape."""
    key = (workload.request.model_dump_json() + repr(workload.checkpointing_optional), margin, shape)
    if key not in _TOPOLOGY_CACHE:
        if len(_TOPOLOGY_CACHE) >= _TOPOLOGY_CACHE_MAX:
            _TOPOLOGY_CACHE.clear()
        _TOPOLOGY_CACHE[key] = _check(shape, workload, margin)
    topology = _TOPOLOGY_CACHE[key]
    if topology is None:
        return Evaluation(topology=None, time=None, error="invalid candidate")
    return Evaluation(topology=topology, time=job_time(workload, topology, tokens))


def _check(shape: Shape, workload: Workload, margin: float) -> TopologyResult | None:
    """Topology verdict for one shape; None when the shape itself is inconsistent."""
    candidate = Candidate(gpu=shape.gpu, form_factor=shape.form_factor, gpu_count=shape.gpus_per_node * shape.nodes,
                          gpus_per_node=shape.gpus_per_node, interconnect=shape.interconnect,  # type: ignore[arg-type]
                          nvlink_gbs=shape.nvlink_gbs, inter_node_gbps=shape.node_gbps,
                          inter_node_fabric=shape.fabric, vram_gib=shape.vram_gib)
    try:
        return check_topology(workload, candidate, margin=margin)
    except ValueError:
        return None


def effective_prices(offer: Offer) -> tuple[float | None, float | None]:
    """(on-demand, interruptible) USD/hour as they should be treated: a provider's market/auction price shown as
    on-demand is interruptible, never on-demand (tools.offer's on_demand_is_market)."""
    if getattr(offer, "on_demand_is_market", False):
        return None, offer.spot_price_per_hour or offer.price_per_hour
    return offer.price_per_hour, offer.spot_price_per_hour


@lru_cache(maxsize=64)
def cached_groups(path: str, mtime: float, gpu: str | None, providers: tuple[str, ...] | None,
                  regions: tuple[str, ...] | None) -> tuple[tuple[tuple[Offer, ...], Shape], ...]:
    """Catalog rows matching the user's wishes, grouped so that the same instance at the same prices in many zones
    is costed once; cached per database file version, since every job with the same wishes reuses them (the memory
    floor, which differs per job, is applied to the groups afterwards). Each group comes with its one-node shape."""
    same: dict[tuple[Any, ...], list[Offer]] = {}
    for offer in query_offers(path, gpu=gpu, providers=providers, regions=regions):
        same.setdefault((offer.provider, offer.instance_type, offer.price_per_hour, offer.spot_price_per_hour,
                         offer.gpu, offer.gpu_form_factor, offer.gpu_count, offer.vram_gib_per_gpu,
                         offer.interconnect, offer.nvlink_gbs, offer.inter_node_gbps_per_gpu,
                         getattr(offer, "on_demand_is_market", False), getattr(offer, "price_outlier", None)),
                        []).append(offer)
    return tuple((tuple(group), shape_of(group[0], 1)) for group in same.values())


def clear_shape_caches() -> None:
    """Forget cached catalog groups and topology verdicts."""
    cached_groups.cache_clear()
    _TOPOLOGY_CACHE.clear()
