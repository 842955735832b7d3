"""Listings: a catalog's offers grouped as the comparison table shows them, and their summary recorded in the
catalog when it is written.

A listing is one instance at one price pair on one hardware shape (provider, instance type, on-demand and spot
price keys, and the shape's columns): the regions and zones that offer it are grouped into it. The summary (how many
listings, offers, the latest snapshot date and the values each filter can take) is what a comparison page needs
before any listing is read; counting listings is a DISTINCT over every offer (about a second on a million offers),
so build_db counts them once, in the transaction that writes the offers, and the page reads the count back."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

SHAPE_COLUMNS = (
    "provider",
    "gpu",
    "gpu_form_factor",
    "gpu_count",
    "vram_gib_per_gpu",
    "interconnect",
    "nvlink_gbs",
    "inter_node_gbps_per_gpu",
    "inter_node_fabric",
    "on_demand_is_market",
)
"""What costing a job on an offer depends on besides its prices (tools.catalog.shapes.shape_of, the provider's
billing and spot model, effective_prices)."""
LISTING_KEY = ("provider", "instance_type", "price_key", "spot_key", *SHAPE_COLUMNS[1:])
"""What the offers of one listing share."""
SUMMARY_KEY = "listings"
"""The catalog meta key the summary is recorded under."""
FACET_KINDS = ("gpus", "providers", "interconnects")
"""The filters' names (the comparison page's order)."""
_FACETS = (
    "SELECT kind, value FROM (SELECT DISTINCT 'gpus' AS kind, gpu AS value FROM offers "
    "UNION ALL SELECT DISTINCT 'providers', provider FROM offers "
    "UNION ALL SELECT DISTINCT 'interconnects', interconnect FROM offers) ORDER BY kind, value"
)
"""The facets, each a DISTINCT over the offers: a lookup in a few dozen values per offer, not a sort of them all."""

ListingSummary = tuple[int, int, str | None, dict[str, list[str]]]
"""(listings, offers, latest snapshot date, facets) of one catalog version."""


def count_listings(conn: sqlite3.Connection) -> int:
    """The number of distinct listing keys among the offers."""
    return int(
        conn.execute(f"SELECT count(*) FROM (SELECT DISTINCT {', '.join(LISTING_KEY)} FROM offers)").fetchone()[0]
    )


def offers_and_facets(conn: sqlite3.Connection) -> tuple[int, str | None, dict[str, list[str]]]:
    """(offers, latest snapshot date, facets): the rest of the summary."""
    offers, snapshot = conn.execute("SELECT count(*), max(snapshot_date) FROM offers").fetchone()
    facets: dict[str, list[str]] = {kind: [] for kind in FACET_KINDS}
    for kind, value in conn.execute(_FACETS):
        facets[kind].append(value)
    return int(offers), snapshot, facets


def summarise(conn: sqlite3.Connection) -> dict[str, Any]:
    """The summary as build_db records it (JSON)."""
    offers, snapshot, facets = offers_and_facets(conn)
    return {"count": count_listings(conn), "offers": offers, "snapshot_date": snapshot, "facets": facets}


def recorded_summary(conn: sqlite3.Connection) -> ListingSummary | None:
    """The summary the catalog was written with; None for a catalog written without one (another tool, an older
    version) or an unreadable one."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (SUMMARY_KEY,)).fetchone()
        found = json.loads(row[0]) if row else None
        if not isinstance(found, dict):
            return None
        facets = {kind: [str(value) for value in found["facets"][kind]] for kind in FACET_KINDS}
        return int(found["count"]), int(found["offers"]), found["snapshot_date"], facets
    except (sqlite3.Error, ValueError, KeyError, TypeError):
        return None
