"""The catalog rows a ranking needs, chosen in SQL: per (provider, instance type, hardware, price trust) the cheapest
on-demand row and the cheapest interruptible row, with how many rows each stands for and the regions that offer
the same instance at the same prices.

Their number depends on how many instance shapes the catalog holds (about a thousand), not on how many offers it
has: a 1M-offer catalog yields as many candidates as the 5k-offer snapshot, and only they become `Offer` objects.
Everything is parameterised SQL; the user's wishes (GPU, providers, regions) filter the rows as in
`tools.catalog.query.query_offers`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tools.catalog.db import MISSING, connect
from tools.catalog.offer import Offer
from tools.catalog.query import OFFER_FIELDS, offer_from_row, wish_filters

KEY_COLUMNS = ("provider", "instance_type", "price_outlier", "on_demand_is_market")
"""Rows that agree on these are one instance shape at one price trust: only region, zone and prices differ (the
catalog index on these columns plus price_key, spot_key lets GROUP BY ... MIN() walk it without sorting)."""
MAX_REGIONS = 64
"""Regions listed per candidate at most (the count of rows it stands for stays exact)."""
IN_MEMORY_ROWS = 20_000
"""Up to this many matching rows, prices and regions are read in one query and grouped here (fewer round trips);
above it, each key is answered by index seeks."""


def _where(where: list[str], *extra: str) -> str:
    """A WHERE clause from the wish filters plus `extra` conditions."""
    clauses = [*where, *extra]
    return f" WHERE {' AND '.join(clauses)}" if clauses else ""


_SAME_KEY = ("provider = ?", "instance_type = ?", "price_outlier IS ?", "on_demand_is_market = ?")


def candidate_rows(
    db_path: str | Path,
    *,
    gpu: str | None = None,
    providers: tuple[str, ...] | None = None,
    regions: tuple[str, ...] | None = None,
) -> list[tuple[Offer, int, tuple[str, ...], int]]:
    """(offer, rows it stands for, regions at the same prices, other zones of its region at other prices) per
    candidate: each key's cheapest on-demand row and, when its prices differ, its cheapest interruptible row. The
    on-demand candidate stands for every row of its key but those priced like the interruptible one, so the counts
    add up to the rows matching the wishes."""
    where, params = wish_filters(gpu, providers, regions)
    key = ", ".join(KEY_COLUMNS)
    chosen = []
    with connect(db_path) as conn:
        groups = conn.execute(
            f"SELECT MIN(price_key), MIN(spot_key), COUNT(*), {key} FROM offers{_where(where)} GROUP BY {key}", params
        ).fetchall()
        rows: _Rows = (
            _InMemory(conn, where, params)
            if sum(g[2] for g in groups) <= IN_MEMORY_ROWS
            else _Indexed(conn, where, params)
        )
        for min_price, min_spot, total, *group in groups:
            od_row = rows.first(group, "price_key", min_price)
            pairs = [od_row] if min_price < MISSING or min_spot >= MISSING else []
            if min_spot < MISSING and od_row[2] != min_spot:
                pairs.append(rows.first(group, "spot_key", min_spot))
            elif min_spot < MISSING and not pairs:
                pairs.append(od_row)
            found = [rows.same_prices(group, row) for row in pairs]
            counts = [total - sum(n for _, n, _ in found[1:]), *(n for _, n, _ in found[1:])]
            in_region: dict[str | None, int] = {}
            for _, _, zones in found:
                for region, n in zones.items():
                    in_region[region] = in_region.get(region, 0) + n
            for row, (regions_seen, _, _), count in zip(pairs, found, counts, strict=True):
                others = rows.in_region(group, row[3]) - in_region.get(row[3], 0)
                chosen.append((row[0], count, regions_seen, max(0, others)))
        full = _full_rows(conn, [row_id for row_id, *_ in chosen])
    return [
        (offer_from_row(full[row_id]), count, regions_seen, others) for row_id, count, regions_seen, others in chosen
    ]


FETCH_CHUNK = 500
"""Row ids per `IN (...)` query when the chosen rows are read whole (below SQLite's oldest variable limit, 999)."""


def _full_rows(conn: Any, ids: list[int]) -> dict[int, tuple[Any, ...]]:
    """OFFER_FIELDS of each row id, read in a few queries (not one per candidate)."""
    found: dict[int, tuple[Any, ...]] = {}
    unique = list(dict.fromkeys(ids))
    for start in range(0, len(unique), FETCH_CHUNK):
        chunk = unique[start : start + FETCH_CHUNK]
        sql = f"SELECT id, {', '.join(OFFER_FIELDS)} FROM offers WHERE id IN ({', '.join('?' * len(chunk))})"
        found.update((row[0], row[1:]) for row in conn.execute(sql, chunk))
    return found


class _Rows:
    """Per-key row lookups a candidate needs (a row here is (id, price_key, spot_key, region))."""

    def first(self, group: list[Any], column: str, value: float) -> tuple[Any, ...]:
        """The key's row with `column` = value, cheapest by the other price, then catalog order."""
        raise NotImplementedError

    def same_prices(self, group: list[Any], row: tuple[Any, ...]) -> tuple[tuple[str, ...], int, dict[Any, int]]:
        """Regions (at most MAX_REGIONS), row count and rows per region of the key at the row's exact prices."""
        raise NotImplementedError

    def in_region(self, group: list[Any], region: str | None) -> int:
        """Rows of the key in `region`, at any price."""
        raise NotImplementedError


class _Indexed(_Rows):
    """Lookups as index seeks: a catalog of any size."""

    def __init__(self, conn: Any, where: list[str], params: list[Any]) -> None:
        """Over `conn`, within the wish filters."""
        self.conn, self.where, self.params = conn, where, params

    def first(self, group: list[Any], column: str, value: float) -> tuple[Any, ...]:
        """See _Rows ('+spot_key' keeps SQLite on the key's index: the spot_key index would walk every row at that
        price)."""
        then, column = ("spot_key", column) if column == "price_key" else ("price_key", "+spot_key")
        sql = (
            f"SELECT id, price_key, spot_key, region FROM offers"
            f"{_where(self.where, *_SAME_KEY, f'{column} = ?')} ORDER BY {then}, id LIMIT 1"
        )
        row: tuple[Any, ...] = self.conn.execute(sql, [*self.params, *group, value]).fetchone()
        return row

    def same_prices(self, group: list[Any], row: tuple[Any, ...]) -> tuple[tuple[str, ...], int, dict[Any, int]]:
        """See _Rows."""
        return _same_prices(self.conn, self.where, self.params, group, row)

    def in_region(self, group: list[Any], region: str | None) -> int:
        """See _Rows."""
        return _region_rows(self.conn, self.where, self.params, group, region)


class _InMemory(_Rows):
    """Lookups over the matching rows' prices and regions read in one query: a small catalog (the snapshot)."""

    def __init__(self, conn: Any, where: list[str], params: list[Any]) -> None:
        """Read (id, price_key, spot_key, region) per key, in catalog order."""
        self.by_key: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
        sql = f"SELECT id, price_key, spot_key, region, {', '.join(KEY_COLUMNS)} FROM offers{_where(where)} ORDER BY id"
        for row_id, price, spot, region, *group in conn.execute(sql, params):
            self.by_key.setdefault(tuple(group), []).append((row_id, price, spot, region))

    def first(self, group: list[Any], column: str, value: float) -> tuple[Any, ...]:
        """See _Rows."""
        rows = self.by_key[tuple(group)]
        if column == "price_key":
            return min((r for r in rows if r[1] == value), key=lambda r: (r[2], r[0]))
        return min((r for r in rows if r[2] == value), key=lambda r: (r[1], r[0]))

    def same_prices(self, group: list[Any], row: tuple[Any, ...]) -> tuple[tuple[str, ...], int, dict[Any, int]]:
        """See _Rows."""
        per_region: dict[Any, int] = {}
        for _, price, spot, region in self.by_key[tuple(group)]:
            if price == row[1] and spot == row[2]:
                per_region[region] = per_region.get(region, 0) + 1
        return tuple(r for r in per_region if r)[:MAX_REGIONS], sum(per_region.values()), per_region

    def in_region(self, group: list[Any], region: str | None) -> int:
        """See _Rows (regions compared case-insensitively, as the index path does)."""
        wanted = region.lower() if region else None
        return sum(1 for *_, other in self.by_key[tuple(group)] if (other.lower() if other else None) == wanted)


def _same_prices(
    conn: Any, where: list[str], params: list[Any], group: list[Any], row: tuple[Any, ...]
) -> tuple[tuple[str, ...], int, dict[str | None, int]]:
    """Regions (at most MAX_REGIONS), row count and rows per region of the candidate's key at its exact prices."""
    sql = (
        f"SELECT region, COUNT(*) FROM offers{_where(where, *_SAME_KEY, 'price_key = ?', 'spot_key = ?')} "
        "GROUP BY region ORDER BY MIN(id)"
    )
    per_region = dict(conn.execute(sql, [*params, *group, row[1], row[2]]).fetchall())
    regions = tuple(region for region in per_region if region)[:MAX_REGIONS]
    return regions, sum(per_region.values()), per_region


def _region_rows(conn: Any, where: list[str], params: list[Any], group: list[Any], region: str | None) -> int:
    """Rows of the candidate's key (provider, instance, price trust) in `region`, at any price. A named region is
    found through the region index (few rows per region and provider); rows without a region through the key's
    index ('+' keeps SQLite off the region index, where one provider's region-less rows can number tens of
    thousands: a 1M-offer catalog's cold candidate query took 8.5 s, 7.9 s of it here)."""
    region_test = "region_lc IS ?" if region else "+region_lc IS ?"
    sql = f"SELECT COUNT(*) FROM offers{_where(where, *_SAME_KEY, region_test, 'provider_lc = ?')}"
    count: int = conn.execute(sql, [*params, *group, region.lower() if region else None, group[0].lower()]).fetchone()[
        0
    ]
    return count
