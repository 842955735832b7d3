"""Which ranked offer leads, and how the list reads. While another plan qualifies, none of these leads: an
unverified outlier price, a layout the topology check advises against (a slow inter-node network, or several nodes
on a network the catalog does not state), a plan without deadline margin, and, under a deadline, spot on several
nodes (it waits for capacity for all of them after each interruption) when certainty costs at most 25 % more. Among
offers within a few percent of the cheapest the simplest leads (fewer nodes, fewer GPUs, not interruptible) unless
another near-tie, at least as safe, is both cheaper and faster. The same instance in several zones of one region is
listed once (the cheapest, with a count of the others)."""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from itertools import accumulate, islice
from operator import le
from typing import Any

from tools.ranking.scale_out import DEADLINE_HEADROOM, has_margin

NEAR_TIE_SHARE = 0.05
"""Offers costing at most 5 % more than the cheapest count as a tie ..."""
NEAR_TIE_USD = 1.0
"""... or at most $1 more, for jobs so small that percentages are cents (product thresholds)."""
CERTAINTY_SHARE = 0.25
"""Under a deadline, a plan that needs no spot capacity for several nodes at once leads over one that does when it
costs at most 25 % more (product threshold: the wait for that capacity is in no estimate, so it is bought, not
priced; beyond that the spot plan leads with its risk stated and the on-demand plan beside it)."""
NOT_ADVISED = frozenset({"multi_node_slow_fabric"})
"""Topology verdicts whose own summary advises against the plan: never the headline while another plan qualifies."""


def fabric_assumed(item: Any) -> bool:
    """A plan on several nodes whose inter-node network the catalog does not state (plain Ethernet assumed): a
    deadline or a price resting on a link nobody measured (independent pods, no InfiniBand/EFA/RoCE)."""
    return item.nodes > 1 and bool((getattr(item.topology, "params", None) or {}).get("inter_node_assumed"))


def spot_nodes_under_deadline(item: Any, deadline_hours: float | None) -> bool:
    """An interruptible plan on several nodes with a deadline: after each interruption it waits for spot capacity
    for all its nodes at once, a wait no estimate includes, so a hard deadline rests on it."""
    return deadline_hours is not None and bool(item.use_spot) and item.nodes > 1


def advised(item: Any) -> bool:
    """True unless the plan's topology verdict advises against it, or it spans nodes on an assumed network."""
    return item.topology.verdict not in NOT_ADVISED and not fabric_assumed(item)


def dominated(item: Any, others: list[Any]) -> bool:
    """True when another plan, at least as safe (an on-demand plan is never beaten by an interruptible one: spot
    hours are an expectation, on-demand hours are not), is at most as dear and at most as slow, and strictly better
    in one of the two."""
    return any(
        o is not item
        and (item.use_spot or not o.use_spot)
        and o.cost <= item.cost
        and o.hours <= item.hours
        and (o.cost < item.cost or o.hours < item.hours)
        for o in others
    )


def undominated(plans: list[Any]) -> list[Any]:
    """The plans `dominated` does not rule out against `plans`, in their order: one sort per safety class instead of
    comparing every pair (a near tie can hold hundreds of plans)."""
    if any(math.isnan(c.cost) or math.isnan(c.hours) for c in plans):  # NaN compares false: the pairwise rule
        return [c for c in plans if not dominated(c, plans)]
    beaten_by_all = _beaten(plans)  # what may beat an interruptible plan: every plan
    beaten_by_on_demand = _beaten([c for c in plans if not c.use_spot])  # what may beat an on-demand one
    return [c for c in plans if not (beaten_by_all if c.use_spot else beaten_by_on_demand)(c.cost, c.hours)]


def _beaten(pool: list[Any]) -> Any:
    """A test (cost, hours) -> whether some plan of `pool` is at most as dear and as slow and better in one."""
    ordered = sorted((c.cost, c.hours) for c in pool)
    costs = [cost for cost, _ in ordered]
    fastest = list(accumulate((hours for _, hours in ordered), min))  # fastest[i]: quickest of the i+1 cheapest

    def beaten(cost: float, hours: float) -> bool:
        """Some plan is strictly cheaper and at most as slow, or as dear and strictly faster."""
        cheaper = bisect_left(costs, cost)
        if cheaper and fastest[cheaper - 1] <= hours:
            return True
        return cheaper < len(costs) and costs[cheaper] == cost and ordered[cheaper][1] < hours

    return beaten


def is_outlier(item: Any) -> bool:
    """True when the price the job is costed at is flagged as an unverified outlier (tools.catalog.offer's price_outlier:
    'spot_below_peers' matters for a spot run, 'price_below_peers' for an on-demand or market-priced one)."""
    kind = item.group.outlier
    if not kind:
        return False
    market = bool(getattr(item.offer, "on_demand_is_market", False))
    if kind == "spot_below_peers":
        return bool(item.use_spot) and not (market and not item.offer.spot_price_per_hour)
    return not item.use_spot or market


def simplicity(item: Any) -> tuple[int, int, bool, float]:
    """Sort key: one node before several, fewer GPUs, on-demand before interruptible, then cost."""
    return (item.nodes, item.offer.gpu_count * item.nodes, bool(item.use_spot), item.cost)


def _pick(eligible: list[Any], deadline_hours: float | None) -> Any:
    """The plan that leads: of the trusted plans (all when none is), those advised (all of them when none is), those
    with deadline margin (likewise), and those not on spot nodes under a deadline when the first of them costs at
    most CERTAINTY_SHARE more, the simplest undominated near-tie of the first. Each "when none is" stops at the first
    plan that is, and the near-ties are read only up to the last plan that can be one when `eligible` is cheapest
    first (a ranking's ~1,000 plans are not filtered in full four times)."""
    any_trusted = any(not is_outlier(c) for c in eligible)

    def trusted(c: Any) -> bool:
        """Among the trusted plans."""
        return not any_trusted or not is_outlier(c)

    any_advised = any(advised(c) for c in eligible if trusted(c))

    def preferred(c: Any) -> bool:
        """Among the trusted plans advised."""
        return trusted(c) and (not any_advised or advised(c))

    any_margin = any(has_margin(c.hours, deadline_hours) for c in eligible if preferred(c))

    def pooled(c: Any) -> bool:
        """Among those with deadline margin."""
        return preferred(c) and (not any_margin or has_margin(c.hours, deadline_hours))

    first = next(c for c in eligible if pooled(c))
    safe = next((c for c in eligible if pooled(c) and not spot_nodes_under_deadline(c, deadline_hours)), None)
    certain = safe is not None and safe.cost <= (1 + CERTAINTY_SHARE) * first.cost
    cheapest = safe if safe is not None and certain else first
    bound = cheapest.cost + max(NEAR_TIE_SHARE * cheapest.cost, NEAR_TIE_USD)
    costs = [c.cost for c in eligible]
    end = bisect_right(costs, bound) if all(map(le, costs, islice(costs, 1, None))) else len(costs)  # NaN: all
    near = [
        c
        for c in islice(eligible, end)
        if c.cost <= bound and pooled(c) and not (certain and spot_nodes_under_deadline(c, deadline_hours))
    ]
    return min(undominated(near) or [cheapest], key=simplicity)


def choose_headline(
    eligible: list[Any], deadline_hours: float | None = None
) -> tuple[list[Any], dict[str, Any] | None]:
    """`eligible` (cheapest first) reordered with the headline first, and why it leads when it is not the cheapest:
    {'code', 'text', 'params'}; None when the cheapest leads. With a deadline, plans that meet it with margin
    (tools.ranking.scale_out.has_margin) are preferred."""
    if not eligible:
        return eligible, None
    pick = _pick(eligible, deadline_hours)
    ordered = [pick, *(c for c in eligible if c is not pick)]
    if not advised(pick):  # nothing else qualifies: say so, so the answer does not advise against its own headline
        assumed = fabric_assumed(pick)
        return ordered, {
            "code": "only_plans_not_advised",
            "params": {
                "topology_verdict": pick.topology.verdict,
                "headline_usd": round(pick.cost, 2),
                "fabric_assumed": assumed,
            },
            "text": (
                "every plan within the limits runs over "
                + (
                    "an inter-node network the catalog does not state (plain Ethernet assumed)"
                    if assumed
                    else "a slow inter-node network"
                )
                + "; this is the cheapest of them"
            ),
        }
    if pick is eligible[0]:
        return ordered, None
    return ordered, reason_over(pick, eligible[0], deadline_hours)


def reason_over(pick: Any, first: Any, deadline_hours: float | None) -> dict[str, Any]:
    """Why `pick` leads over `first` (the cheapest eligible plan, or one a user asks about): {'code', 'text',
    'params'}, the first rule `first` breaks (an unverified price, no deadline margin, a layout advised against, spot
    on several nodes under a deadline), else the simpler near tie."""
    params: dict[str, Any] = {
        "cheapest_usd": round(first.cost, 2),
        "headline_usd": round(pick.cost, 2),
        "extra_usd": round(pick.cost - first.cost, 2),
        "extra_share": round((pick.cost - first.cost) / first.cost, 4) if first.cost > 0 else None,
        "cheapest_gpus": first.offer.gpu_count * first.nodes,
        "headline_gpus": pick.offer.gpu_count * pick.nodes,
        "cheapest_nodes": first.nodes,
        "headline_nodes": pick.nodes,
        "cheapest_spot": bool(first.use_spot),
        "headline_spot": bool(pick.use_spot),
        "cheapest_provider": first.offer.provider,
        "cheapest_hours": round(first.hours, 2),
        "headline_hours": round(pick.hours, 2),
        "cheapest_outlier": getattr(first.offer, "price_outlier", None),
        "cheapest_peer_median_price": getattr(first.offer, "peer_median_price", None),
        "cheapest_topology_verdict": first.topology.verdict,
        "cheapest_fabric_assumed": fabric_assumed(first),
    }
    if is_outlier(first):
        return {
            "code": "cheaper_price_unverified",
            "params": params,
            "text": (
                f"a cheaper {first.offer.provider} price (${first.cost:,.2f}) is far from the same GPU elsewhere and "
                "unverified: listed below, not recommended first"
            ),
        }
    if not has_margin(first.hours, deadline_hours) and has_margin(pick.hours, deadline_hours):
        return {
            "code": "deadline_margin",
            "params": params | {"deadline_hours": deadline_hours},
            "text": (
                f"a cheaper plan (${first.cost:,.2f}) takes {first.hours:,.1f} h of the {deadline_hours:g} h allowed, "
                f"without the {DEADLINE_HEADROOM - 1:.0%} margin job-time estimates need: listed below"
            ),
        }
    if not advised(first):
        network = (
            "an inter-node network the catalog does not state (plain Ethernet assumed)"
            if fabric_assumed(first)
            else "a slow inter-node network that the layout check advises against"
        )
        return {
            "code": "cheaper_layout_not_advised",
            "params": params,
            "text": (
                f"a cheaper plan (${first.cost:,.2f}, {first.nodes} nodes) runs over {network}: listed below, not "
                "recommended first"
            ),
        }
    if spot_nodes_under_deadline(first, deadline_hours) and not spot_nodes_under_deadline(pick, deadline_hours):
        return {
            "code": "spot_nodes_under_deadline",
            "params": params | {"deadline_hours": deadline_hours},
            "text": (
                f"a cheaper plan (${first.cost:,.2f}) runs on {first.nodes} spot nodes: after each "
                "interruption it waits for spot capacity for all of them at once, which no estimate "
                "includes, so with a deadline a plan that does not depend on it leads: listed below"
            ),
        }
    changes = []
    if pick.nodes < first.nodes:
        changes.append("one node" if pick.nodes == 1 else "fewer nodes")
    if params["headline_gpus"] < params["cheapest_gpus"]:
        changes.append(f"{params['headline_gpus']} GPU(s) instead of {params['cheapest_gpus']}")
    if first.use_spot and not pick.use_spot:
        changes.append("on-demand (no interruptions)")
    if pick.hours < first.hours:
        changes.append(f"faster ({pick.hours:,.1f} h instead of {first.hours:,.1f} h)")
    return {
        "code": "simpler_near_tie",
        "params": params,
        "text": (
            f"within ${pick.cost - first.cost:,.2f} of the cheapest and simpler: " + (", ".join(changes) or "simpler")
        ),
    }


def collapse_zones(ordered: list[Any], limit: int) -> tuple[list[tuple[Any, int]], int]:
    """The first `limit` entries keeping the first per (provider, instance, region, nodes, spot), each with how many
    others were folded into it, and how many entries are left after folding."""
    kept: dict[tuple[Any, ...], Any] = {}
    folded: dict[tuple[Any, ...], int] = {}
    for item in ordered:
        key = (
            item.group.one_node_keys[bool(item.use_spot)]
            if item.nodes == 1
            else (item.group.listing_key, item.nodes, bool(item.use_spot))
        )
        if key in kept:
            folded[key] = folded.get(key, 0) + 1
        else:
            kept[key] = item
    top: list[tuple[Any, int]] = []
    for key, item in kept.items():
        if len(top) >= limit:
            break
        top.append((item, folded.get(key, 0)))
    return top, len(kept)
