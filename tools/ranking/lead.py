"""Why the plan leads over another plan a user names ("why not the A100s?"): the headline rules of
tools.ranking.headline read on two ranked entries (RankedOffer as JSON), so a why-not whose plan is cheaper, faster
or about as dear is answered with the rule it loses by, not with its merits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from tools.ranking.headline import (
    NEAR_TIE_SHARE,
    NEAR_TIE_USD,
    advised,
    is_outlier,
    reason_over,
    simplicity,
)


class _Offer(NamedTuple):
    """The offer facts the headline rules read."""

    provider: str
    gpu_count: int
    on_demand_is_market: bool
    spot_price_per_hour: float | None
    price_outlier: str | None
    peer_median_price: float | None


class _Group(NamedTuple):
    """The price-trust flag the headline rules read from a plan's group."""

    outlier: str | None


class _Topology(NamedTuple):
    """The topology verdict and its numbers."""

    verdict: str
    params: dict[str, Any]


class _Plan(NamedTuple):
    """A ranked entry with the attribute names of a costed plan (tools.ranking.costing.Costed)."""

    offer: _Offer
    group: _Group
    topology: _Topology
    nodes: int
    use_spot: bool
    cost: float
    hours: float


def _plan(entry: Mapping[str, Any]) -> _Plan:
    """A ranked entry as the headline rules read a plan."""
    offer = _Offer(
        provider=entry["provider"],
        gpu_count=int(entry["gpu_count"]),
        on_demand_is_market=bool(entry.get("on_demand_is_market")),
        spot_price_per_hour=entry.get("spot_price_per_hour"),
        price_outlier=entry.get("price_outlier"),
        peer_median_price=entry.get("peer_median_price"),
    )
    return _Plan(
        offer=offer,
        group=_Group(outlier=entry.get("price_outlier")),
        topology=_Topology(verdict=entry.get("topology_verdict") or "", params=entry.get("topology_params") or {}),
        nodes=int(entry.get("nodes") or 1),
        use_spot=bool(entry.get("spot")),
        cost=float(entry["est_cost"]),
        hours=float(entry["est_hours"]),
    )


def _simpler(pick: _Plan, other: _Plan) -> bool:
    """Whether `pick` comes first by the headline's simplicity order, cost aside (fewer nodes, fewer GPUs, not spot)."""
    return simplicity(pick)[:3] < simplicity(other)[:3]


def lead_over(plan: Mapping[str, Any], other: Mapping[str, Any], deadline_hours: float | None) -> dict[str, Any] | None:
    """The headline rule by which `plan` leads over `other` ({'code', 'text', 'params'}, as the ranking's own
    headline_reason, `other` in the place of the cheapest): a rule `other` breaks and `plan` keeps, else the simpler
    of a near tie. None when `other` is dearer than a near tie, or dearer or slower and neither cheaper nor faster
    (its cost and time are the reason), or no rule tells them apart."""
    pick, rival = _plan(plan), _plan(other)
    base = min(pick.cost, rival.cost)
    if rival.cost > base + max(NEAR_TIE_SHARE * base, NEAR_TIE_USD):
        return None
    if rival.cost >= pick.cost and rival.hours >= pick.hours and (rival.cost, rival.hours) != (pick.cost, pick.hours):
        return None  # no better on either count: its gaps say why
    reason = reason_over(pick, rival, deadline_hours)  # deadline margin and spot nodes: only where the plan keeps it
    code = reason["code"]
    if code == "cheaper_price_unverified" and is_outlier(pick):
        return None
    if code == "cheaper_layout_not_advised" and not advised(pick):
        return None
    if code == "simpler_near_tie" and not _simpler(pick, rival):
        return None
    return reason
