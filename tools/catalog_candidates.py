"""The catalog rows a ranking needs, chosen in SQL: per (provider, instance type, hardware, price trust) the cheapest
on-demand row and the cheapest interruptible row, with how many rows each stands for and the regions that offer
the same instance at the same prices.

Their number depends on how many instance shapes the catalog holds (about a thousand), not on how many offers it
has: a 1M-offer catalog yields as many candidates as the 5k-offer snapshot, and only they become `Offer` objects.
Everything is parameterised SQL; the user's wishes (GPU, providers, regions) filter the rows as in
`tools.catalog.query_offers`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tools.catalog import OFFER_FIELDS, Offer, connect

KEY_COLUMNS = ("provider", "instance_type", "gpu", "gpu_form_factor", "gpu_count", "vram_gib_per_gpu",
               "interconnect", "nvlink_gbs", "inter_node_gbps_per_gpu", "inter_node_fabric", "on_demand_is_market",
               "price_outlier")
"""Rows that agree on these are the same hardware at the same trust: only their prices differ."""
MAX_REGIONS = 64
"""Regions listed per candidate at most (the count of rows it stands for stays exact)."""
_REGION = OFFER_FIELDS.index("region")
_BOOL_FIELDS = [name for name, info in Offer.model_fields.items() if info.annotation is bool]


def wish_filters(gpu: str | None, providers: tuple[str, ...] | None,
                 regions: tuple[str, ...] | None) -> tuple[list[str], list[Any]]:
    """WHERE clauses and parameters for the user's GPU, provider and region wishes (as query_offers reads them)."""
    from tools.gpus import gpu_family_names, parse_gpu_name

    where: list[str] = []
    params: list[Any] = []
    if gpu:
        names = gpu_family_names(gpu) or [gpu.strip()]
        where.append(f"gpu_lc IN ({', '.join('?' for _ in names)})")
        params.extend(n.lower() for n in names)
        parsed = parse_gpu_name(gpu)
        if parsed and parsed.form_factor:
            where.append("gpu_form_factor = ?")
            params.append(parsed.form_factor)
    if providers:
        from tools.providers import normalise_provider

        ids = sorted({normalise_provider(p) for p in providers if p})
        marks = ", ".join("?" for _ in ids)
        where.append(f"(provider_lc IN ({marks}) OR upstream_lc IN ({marks}))")
        params.extend([*ids, *ids])
    if regions:
        lowered = [r.strip().lower() for r in regions if r]
        marks = ", ".join("?" for _ in lowered)
        where.append(f"(region_lc IN ({marks}) OR zone_lc IN ({marks}))")
        params.extend([*lowered, *lowered])
    return where, params


def _sql(where: list[str]) -> str:
    """One pass over the matching rows: window functions pick each key's candidates and their same-price rows."""
    key = ", ".join(KEY_COLUMNS)
    fields = ", ".join(OFFER_FIELDS)
    return f"""
        WITH ranked AS (
            SELECT id, {fields}, price_key, spot_key,
                   COUNT(*) OVER k AS n,
                   COUNT(*) OVER (PARTITION BY {key}, region) AS region_n,
                   COUNT(*) OVER (PARTITION BY {key}, price_key, spot_key) AS pair_n,
                   ROW_NUMBER() OVER (PARTITION BY {key}, price_key, spot_key ORDER BY id) AS pair_rank,
                   FIRST_VALUE(id) OVER (k ORDER BY price_key, spot_key, id) AS od_id,
                   FIRST_VALUE(price_key) OVER (k ORDER BY price_key, spot_key, id) AS od_p,
                   FIRST_VALUE(spot_key) OVER (k ORDER BY price_key, spot_key, id) AS od_s,
                   FIRST_VALUE(id) OVER (k ORDER BY spot_key, price_key, id) AS sp_id,
                   FIRST_VALUE(price_key) OVER (k ORDER BY spot_key, price_key, id) AS sp_p,
                   FIRST_VALUE(spot_key) OVER (k ORDER BY spot_key, price_key, id) AS sp_s
            FROM offers {'WHERE ' + ' AND '.join(where) if where else ''}
            WINDOW k AS (PARTITION BY {key}))
        SELECT {fields}, id, n, pair_n, od_id, sp_id, (price_key = od_p AND spot_key = od_s) AS is_od, region_n
        FROM ranked
        WHERE pair_rank <= {MAX_REGIONS}
          AND ((price_key = od_p AND spot_key = od_s) OR (price_key = sp_p AND spot_key = sp_s))
        ORDER BY od_id, is_od DESC, id"""


def _offer(row: tuple[Any, ...]) -> Offer:
    """An Offer from the OFFER_FIELDS part of a row (validated when the catalog was built)."""
    values = dict(zip(OFFER_FIELDS, row))
    for name in _BOOL_FIELDS:
        values[name] = bool(values[name])
    return Offer.model_construct(**values)


def candidate_rows(db_path: str | Path, *, gpu: str | None = None, providers: tuple[str, ...] | None = None,
                   regions: tuple[str, ...] | None = None) -> list[tuple[Offer, int, tuple[str, ...], int]]:
    """(offer, rows it stands for, regions at the same prices, other zones of its region at other prices) per
    candidate: each key's cheapest on-demand row
    (ties: cheapest interruptible price, then catalog order) and, when its prices differ, its cheapest
    interruptible row. The on-demand candidate stands for every row of its key but those priced like the
    interruptible one, so the counts add up to the rows matching the wishes."""
    where, params = wish_filters(gpu, providers, regions)
    width = len(OFFER_FIELDS)
    found: dict[int, dict[str, Any]] = {}
    with connect(db_path) as conn:
        for row in conn.execute(_sql(where), params):
            fields, (row_id, total, pair_total, od_id, sp_id, is_od, region_total) = row[:width], row[width:]
            candidate_id = od_id if is_od else sp_id
            entry = found.get(candidate_id)
            if entry is None:
                entry = found[candidate_id] = {"offer": None, "regions": [], "pair": pair_total, "total": total,
                                               "od": bool(is_od), "partner": sp_id if is_od else od_id,
                                               "in_region": {}}
            region = fields[_REGION]
            if row_id == candidate_id:
                entry["offer"] = _offer(fields)
                entry["region_total"] = region_total
            entry["in_region"][region] = entry["in_region"].get(region, 0) + 1
            if region and region not in entry["regions"]:
                entry["regions"].append(region)
    result = []
    for candidate_id, entry in found.items():
        if entry["offer"] is None:
            continue
        if entry["od"]:
            spot = found.get(entry["partner"])
            count = entry["total"] - (spot["pair"] if spot is not None and not spot["od"] else 0)
        else:
            count = entry["pair"]
        region = entry["offer"].region
        partner = found.get(entry["partner"]) if entry["partner"] != candidate_id else None
        shown = entry["in_region"].get(region, 0) + (partner["in_region"].get(region, 0) if partner else 0)
        result.append((entry["offer"], count, tuple(entry["regions"]), max(0, entry["region_total"] - shown)))
    return result
