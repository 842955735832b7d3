"""Prices you can trust: per-provider pricing semantics and price outliers, computed when a catalog is imported.

* ``on_demand_is_market``: the provider's "on-demand" price is a market/auction price and the instance can be
  interrupted like spot (Mithril: its SpotPrice equals Price on every row). From each provider's record
  (``tools/providers/data/<id>.json``, ``pricing``, with its source), and also from the evidence itself: a provider whose every priced row has
  ``Price == SpotPrice`` is treated as market-priced (conservative) and the importer says so in a note.
* ``price_outlier``: a price far below what the same GPU and count costs elsewhere, as an unverified outlier
  (e.g. one $3.01/h spot g6e.48xlarge zone where the other zones are $10.80-12.48). Peers, in this order:
  1. the same provider's same instance type (same GPU and count) in other regions/zones, at least ``MIN_PEERS``;
  2. other providers with the same GPU and count: the median of each provider's median (one vote per provider, so
     a hyperscaler's many zones do not set the level), at least ``MIN_PEERS`` providers; market-priced on-demand
     prices are not used as peers.
  A price below ``OUTLIER_RATIO`` x the peers' median is flagged ``spot_below_peers`` / ``price_below_peers`` with
  ``peer_median_price`` (whole instance, same price kind). Only cheap outliers are flagged: an expensive one never
  becomes a headline pick.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from tools.catalog.offer import Offer
from tools.providers import Pricing, all_records

OUTLIER_RATIO = 0.4
"""A price below this fraction of its peers' median is an outlier. AWS spot zones of one instance type commonly
differ by 2x; below 0.4x (the audit's g6e.48xlarge spot: 0.34x) is rare (< 1 % of v7 offers)."""

MIN_PEERS = 3
"""Fewest peer prices (or peer providers) for a median worth comparing against."""

_KINDS = (("spot_price_per_hour", "spot_below_peers"), ("price_per_hour", "price_below_peers"))


def pricing_of(provider: str) -> Pricing | None:
    """Pricing semantics of a provider id ('mithril', 'aws', ...): its record's `pricing`, None when not known."""
    record = all_records().get(provider.strip().lower())
    return record.pricing if record is not None else None


def market_priced_providers() -> list[str]:
    """Provider ids whose listed on-demand price is a market/auction price."""
    return sorted(pid for pid, record in all_records().items() if record.pricing and record.pricing.on_demand_is_market)


def market_price_evidence(offers: Iterable[Offer]) -> set[str]:
    """Providers whose every offer with both prices has Price == SpotPrice (at least 3 such offers)."""
    both: dict[str, list[bool]] = defaultdict(list)
    for offer in offers:
        if offer.price_per_hour is not None and offer.spot_price_per_hour is not None:
            both[offer.provider].append(abs(offer.price_per_hour - offer.spot_price_per_hour) < 1e-9)
    return {provider for provider, same in both.items() if len(same) >= MIN_PEERS and all(same)}


def _is_market(offer: Offer, evidence: set[str]) -> bool:
    info = pricing_of(offer.provider)
    return bool(info and info.on_demand_is_market) or offer.provider in evidence


def _price(offer: Offer, kind: str, market: bool) -> float | None:
    value: float | None = getattr(offer, kind)
    if kind == "price_per_hour" and market:
        return None  # a market price is no reference for on-demand peers
    return value


def annotate_price_trust(offers: Iterable[Offer]) -> list[Offer]:
    """The offers (same order) with on_demand_is_market, price_outlier and peer_median_price recomputed."""
    offers = list(offers)
    evidence = market_price_evidence(offers)
    market = [_is_market(o, evidence) for o in offers]
    same_type: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    same_gpu: dict[tuple[Any, ...], dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for i, offer in enumerate(offers):
        same_type[(offer.provider, offer.instance_type, offer.gpu, offer.gpu_count)].append(i)
        same_gpu[(offer.gpu, offer.gpu_count)][offer.provider].append(i)
    provider_medians: dict[tuple[Any, ...], dict[str, float]] = {}
    for key, by_provider in same_gpu.items():
        for kind, _ in _KINDS:
            medians = {}
            for provider, indices in by_provider.items():
                values = [v for j in indices if (v := _price(offers[j], kind, market[j])) is not None]
                if values:
                    medians[provider] = statistics.median(values)
            provider_medians[(*key, kind)] = medians
    annotated = []
    for i, offer in enumerate(offers):
        verdict = _verdict(i, offers, market, same_type, provider_medians)
        reason, median = verdict if verdict else (None, None)
        annotated.append(
            offer.model_copy(
                update={"on_demand_is_market": market[i], "price_outlier": reason, "peer_median_price": median}
            )
        )
    return annotated


def _verdict(
    i: int,
    offers: list[Offer],
    market: list[bool],
    same_type: dict[tuple[Any, ...], list[int]],
    provider_medians: dict[tuple[Any, ...], dict[str, float]],
) -> tuple[str, float] | None:
    offer = offers[i]
    for kind, reason in _KINDS:
        own = getattr(offer, kind)
        if own is None:
            continue
        peers = [
            v
            for j in same_type[(offer.provider, offer.instance_type, offer.gpu, offer.gpu_count)]
            if j != i and (v := _price(offers[j], kind, market[j])) is not None
        ]
        if len(peers) >= MIN_PEERS:
            median = statistics.median(peers)
            if own < OUTLIER_RATIO * median:
                return reason, round(median, 6)
            continue  # enough same-type peers and within range: their verdict stands
        others = [m for p, m in provider_medians[(offer.gpu, offer.gpu_count, kind)].items() if p != offer.provider]
        if len(others) >= MIN_PEERS:
            median = statistics.median(others)
            if own < OUTLIER_RATIO * median:
                return reason, round(median, 6)
    return None
