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

from tools.catalog import MISSING, OFFER_FIELDS, Offer, connect

KEY_COLUMNS = ("provider", "instance_type", "price_outlier", "on_demand_is_market")
"""Rows that agree on these are one instance shape at one price trust: only region, zone and prices differ (the
catalog index on these columns plus price_key, spot_key lets GROUP BY ... MIN() walk it without sorting)."""
MAX_REGIONS = 64
"""Regions listed per candidate at most (the count of rows it stands for stays exact)."""
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


def _where(where: list[str], *extra: str) -> str:
    """A WHERE clause from the wish filters plus `extra` conditions."""
    clauses = [*where, *extra]
    return f" WHERE {' AND '.join(clauses)}" if clauses else ""


_SAME_KEY = ("provider = ?", "instance_type = ?", "price_outlier IS ?", "on_demand_is_market = ?")


def _offer(row: tuple[Any, ...]) -> Offer:
    """An Offer from the OFFER_FIELDS part of a row (validated when the catalog was built)."""
    values = dict(zip(OFFER_FIELDS, row))
    for name in _BOOL_FIELDS:
        values[name] = bool(values[name])
    return Offer.model_construct(**values)


def candidate_rows(db_path: str | Path, *, gpu: str | None = None, providers: tuple[str, ...] | None = None,
                   regions: tuple[str, ...] | None = None) -> list[tuple[Offer, int, tuple[str, ...], int]]:
    """(offer, rows it stands for, regions at the same prices, other zones of its region at other prices) per
    candidate: each key's cheapest on-demand row and, when its prices differ, its cheapest interruptible row. The
    on-demand candidate stands for every row of its key but those priced like the interruptible one, so the counts
    add up to the rows matching the wishes."""
    where, params = wish_filters(gpu, providers, regions)
    key = ", ".join(KEY_COLUMNS)
    result = []
    with connect(db_path) as conn:
        groups = conn.execute(f"SELECT MIN(price_key), MIN(spot_key), COUNT(*), {key} FROM offers{_where(where)} "
                              f"GROUP BY {key}", params).fetchall()
        for min_price, min_spot, total, *group in groups:
            od_row = _first(conn, where, params, group, "price_key", min_price, "spot_key")
            pairs = [od_row] if min_price < MISSING or min_spot >= MISSING else []
            if min_spot < MISSING and od_row[2] != min_spot:
                pairs.append(_first(conn, where, params, group, "+spot_key", min_spot, "price_key"))
            elif min_spot < MISSING and not pairs:
                pairs.append(od_row)
            found = [_same_prices(conn, where, params, row) for row in pairs]
            counts = [total - sum(n for _, n, _ in found[1:]), *(n for _, n, _ in found[1:])]
            in_region = {}
            for regions_seen, _, zones in found:
                for region, n in zones.items():
                    in_region[region] = in_region.get(region, 0) + n
            for row, (regions_seen, _, _), count in zip(pairs, found, counts, strict=True):
                offer = _offer(row[3:])
                others = _region_rows(conn, where, params, offer) - in_region.get(offer.region, 0)
                result.append((offer, count, regions_seen, max(0, others)))
    return result


def _first(conn: Any, where: list[str], params: list[Any], group: list[Any], column: str, value: float,
           then: str) -> tuple[Any, ...]:
    """The key's first row (id, price_key, spot_key, OFFER_FIELDS...) with `column` = value, by `then`, then id
    ('+spot_key' keeps SQLite on the key's index: a spot_key index alone would walk every row at that price)."""
    sql = (f"SELECT id, price_key, spot_key, {', '.join(OFFER_FIELDS)} FROM offers"
           f"{_where(where, *_SAME_KEY, f'{column} = ?')} ORDER BY {then}, id LIMIT 1")
    return conn.execute(sql, [*params, *group, value]).fetchone()


def _key_values(offer_row: tuple[Any, ...]) -> list[Any]:
    """The KEY_COLUMNS values of a fetched row (id, price_key, spot_key, OFFER_FIELDS...)."""
    return [offer_row[3 + OFFER_FIELDS.index(name)] for name in KEY_COLUMNS]


def _same_prices(conn: Any, where: list[str], params: list[Any], row: tuple[Any, ...]
                 ) -> tuple[tuple[str, ...], int, dict[str | None, int]]:
    """Regions (at most MAX_REGIONS), row count and rows per region of the candidate's key at its exact prices."""
    sql = (f"SELECT region, COUNT(*) FROM offers{_where(where, *_SAME_KEY, 'price_key = ?', 'spot_key = ?')} "
           "GROUP BY region ORDER BY MIN(id)")
    per_region = dict(conn.execute(sql, [*params, *_key_values(row), row[1], row[2]]).fetchall())
    regions = tuple(region for region in per_region if region)[:MAX_REGIONS]
    return regions, sum(per_region.values()), per_region


def _region_rows(conn: Any, where: list[str], params: list[Any], offer: Offer) -> int:
    """Rows of the candidate's key in its region, at any price."""
    sql = f"SELECT COUNT(*) FROM offers{_where(where, *_SAME_KEY, 'region_lc IS ?', 'provider_lc = ?')}"
    values = [offer.provider, offer.instance_type, offer.price_outlier, int(bool(offer.on_demand_is_market))]
    region = offer.region.lower() if offer.region else None
    return conn.execute(sql, [*params, *values, region, offer.provider.lower()]).fetchone()[0]
