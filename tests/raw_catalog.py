"""Costs worked out from a catalog database's raw rows (plain SQL), to grade the ranking without its own code."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

NEAR_TIE_SHARE, NEAR_TIE_USD = 0.05, 1.0
"""README: a simpler plan within 5 % or $1 of the cheapest may lead."""


def raw_price(db_path: Path, offer: dict[str, Any]) -> float:
    """The per-instance hourly price of an offer's catalog row, spot or on-demand as the offer rents it."""
    with sqlite3.connect(db_path) as connection:
        rows = connection.execute(
            "SELECT price_per_hour, spot_price_per_hour, on_demand_is_market FROM offers WHERE provider = ? AND "
            "instance_type = ? AND region IS ?",
            (offer["provider"], offer["instance_type"], offer["region"]),
        ).fetchall()
    assert rows, (offer["provider"], offer["instance_type"], offer["region"])
    prices = set()
    for on_demand, spot, market in rows:
        if offer["spot"]:
            prices.add(spot if spot is not None else on_demand if market else None)
        else:
            prices.add(None if market else on_demand)
    prices.discard(None)
    assert prices, offer
    return min(prices)  # zones of one region may differ: the offer stands for the cheapest


def raw_cost(db_path: Path, offer: dict[str, Any]) -> float:
    """Raw row price x instances x billed hours (on spot the expected billed run, restarts included)."""
    return raw_price(db_path, offer) * (offer.get("nodes") or 1) * offer["billed_hours"]


def assert_headline_rule(db_path: Path, offers: list[dict[str, Any]]) -> None:
    """Each cost matches its raw row; the headline is the cheapest listed or within 5 % / $1 of it; the rest (after
    an on-demand plan in second place beside an interruptible headline) come by cost. Not for jobs with a deadline,
    where plans with a time margin lead."""
    costs = [raw_cost(db_path, o) for o in offers]
    for offer, cost in zip(offers, costs, strict=True):
        assert abs(offer["est_cost"] - cost) <= 1e-3 * cost + 0.01, (offer["provider"], offer["instance_type"])
    cheapest = min(costs)
    assert costs[0] <= cheapest + max(NEAR_TIE_SHARE * cheapest, NEAR_TIE_USD)
    on_demand_second = len(offers) > 1 and offers[0]["spot"] and not offers[1]["spot"]
    rest = costs[2:] if on_demand_second else costs[1:]
    assert rest == sorted(rest)
