"""Checks a freshly imported catalog must pass before it replaces the current one: enough rows per cloud compared
with what the current catalog (or the shipped snapshot) holds, and prices that are plausible for each GPU."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from tools.catalog.offer import Offer

MIN_ROW_SHARE = 0.5
"""A cloud's new file must keep at least this share of the offers the current catalog has from it."""
PRICE_FACTOR = 25.0
"""A per-GPU price this many times below or above the GPU's median in the shipped snapshot is implausible (the
snapshot's own spread is within 0.11x-9.8x of each GPU's median)."""
MIN_PRICE_PER_GPU_HOUR = 0.01
MAX_PRICE_PER_GPU_HOUR = 500.0
MAX_BAD_PRICE_SHARE = 0.1
"""More implausible prices than this share of a cloud's offers fails the update (wrong units, a broken feed)."""


@dataclass(frozen=True)
class PriceProblem:
    """One offer whose price is not believable."""

    offer: Offer
    message: str


@lru_cache(maxsize=1)
def snapshot_medians() -> dict[str, float]:
    """Median price per GPU-hour of each GPU model in the shipped snapshot (on-demand and spot together)."""
    from tools.catalog.snapshot import read_snapshot

    _, offers = read_snapshot()
    return medians(offers)


def medians(offers: Iterable[Offer]) -> dict[str, float]:
    """Median price per GPU-hour of each GPU model among `offers`."""
    prices: dict[str, list[float]] = defaultdict(list)
    for offer in offers:
        for price in (offer.price_per_gpu_hour, offer.spot_price_per_gpu_hour):
            if price:
                prices[offer.gpu].append(price)
    return {gpu: statistics.median(values) for gpu, values in prices.items()}


def price_problem(offer: Offer, reference: dict[str, float]) -> str | None:
    """Why `offer`'s price per GPU-hour is implausible, or None."""
    median = reference.get(offer.gpu)
    for label, price in (("price", offer.price_per_gpu_hour), ("spot price", offer.spot_price_per_gpu_hour)):
        if price is None:
            continue
        if not MIN_PRICE_PER_GPU_HOUR <= price <= MAX_PRICE_PER_GPU_HOUR:
            return (
                f"{label} ${price:g} per GPU-hour for {offer.gpu} is outside "
                f"${MIN_PRICE_PER_GPU_HOUR:g}-{MAX_PRICE_PER_GPU_HOUR:g}"
            )
        if median and not median / PRICE_FACTOR <= price <= median * PRICE_FACTOR:
            return (
                f"{label} ${price:g} per GPU-hour for {offer.gpu} is implausible (typical ${median:.2f}; "
                f"allowed {1 / PRICE_FACTOR:g}x-{PRICE_FACTOR:g}x)"
            )
    return None


def split_by_price(
    offers: list[Offer], reference: dict[str, float] | None = None
) -> tuple[list[Offer], list[PriceProblem]]:
    """(plausible offers, problems) of one cloud's offers."""
    reference = snapshot_medians() if reference is None else reference
    good: list[Offer] = []
    bad: list[PriceProblem] = []
    for offer in offers:
        problem = price_problem(offer, reference)
        if problem:
            bad.append(PriceProblem(offer, problem))
        else:
            good.append(offer)
    return good, bad


def shrink_problem(cloud: str, new_count: int, old_count: int | None) -> str | None:
    """Why a cloud's new offer count is suspicious next to the current one, or None."""
    if not old_count or new_count >= old_count * MIN_ROW_SHARE:
        return None
    return (
        f"{cloud}: {new_count} offer(s) where the current catalog has {old_count} (under "
        f"{MIN_ROW_SHARE:.0%}): a truncated or partial file? Pass --allow-shrink to accept it"
    )
