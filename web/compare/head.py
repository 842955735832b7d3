"""The comparison table's first pages read from the catalog file itself while its store is being built
(web.compare.store): what a person opens first (no job, no filter, sorted by price, either order, the first
EARLY_ROWS rows) is exactly what the store will answer, so that paging on after the store is ready stays consistent.

A listing is the catalog's offers that share provider, instance type, price pair and hardware shape; its id is its
lowest offer id (the store's). All of a listing's offers share its price key, so walking the catalog's price index
one price at a time yields whole listings in the store's (price, id) order. The count of listings, the facets, the
offer count and the snapshot date are read once per catalog version (a full pass over the offers; kept per process)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from tools.catalog import MISSING
from tools.lru import Lru
from web.compare.data import CompareQuery, filters_sql, shaped_rows
from web.compare.store import SHAPE_COLUMNS, billing_of, store_path

EARLY_ROWS = 1000
"""Views whose page ends within this many rows are served from the catalog while the store is built."""
LISTING_KEY = ("provider", "instance_type", "price_key", "spot_key", *SHAPE_COLUMNS[1:])
"""What the offers of one listing share (web.compare.store groups by these)."""
_ROW_SQL = (
    "SELECT id, provider, instance_type, gpu, gpu_form_factor, gpu_count, vram_gib_per_gpu, interconnect, region, "
    "price_per_hour, spot_price_per_hour, price_per_hour * 1.0 / gpu_count, snapshot_date FROM offers "
    "WHERE id IN (SELECT value FROM json_each(?))"
)
_heads: Lru[str, tuple[int, int, str | None, dict[str, list[str]]]] = Lru(2)


def opens_on(query: CompareQuery) -> bool:
    """Whether a query is a view served from the catalog: no job or filter, sorted by price, within EARLY_ROWS."""
    return (
        not (query.job and query.job.strip())
        and not filters_sql(query)[0]
        and query.sort in (None, "price")
        and query.page * query.page_size <= EARLY_ROWS
    )


def _connect(catalog: Path) -> sqlite3.Connection:
    """A read-only connection to the catalog."""
    conn = sqlite3.connect(f"file:{catalog.resolve().as_posix()}?mode=ro", uri=True, check_same_thread=False)
    conn.execute("PRAGMA cache_size = -16000")
    return conn


def _head(conn: sqlite3.Connection, key: str) -> tuple[int, int, str | None, dict[str, list[str]]]:
    """(listings, offers, snapshot date, facets) of the catalog, as the store's rows, meta and facets hold them."""

    def read() -> tuple[int, int, str | None, dict[str, list[str]]]:
        """One pass for the count of listings, one for the offers and the date, the facets from indexes or a scan."""
        listings = conn.execute(f"SELECT count(*) FROM (SELECT DISTINCT {', '.join(LISTING_KEY)} FROM offers)")
        total = listings.fetchone()[0]
        offers, snapshot = conn.execute("SELECT count(*), max(snapshot_date) FROM offers").fetchone()
        facets: dict[str, list[str]] = {"gpus": [], "providers": [], "interconnects": []}
        for kind, value in conn.execute(
            "SELECT kind, value FROM (SELECT 'gpus' AS kind, gpu AS value FROM offers GROUP BY gpu "
            "UNION ALL SELECT 'providers', provider FROM offers GROUP BY provider "
            "UNION ALL SELECT 'interconnects', interconnect FROM offers GROUP BY interconnect) ORDER BY kind, value"
        ):
            facets[kind].append(value)
        return total, offers, snapshot, facets

    return _heads.get_or_make(key, read)


def _listings(conn: sqlite3.Connection, wanted: int, descending: bool) -> list[tuple[int, list[tuple[Any, ...]]]]:
    """The first `wanted` listings with a price in the store's order (price key, then id, both one way): each its id
    and its offers' (region, zone, region_lc, zone_lc); fewer when the catalog has fewer."""
    direction = "DESC" if descending else "ASC"
    cursor = conn.execute(
        f"SELECT id, price_key, {', '.join(LISTING_KEY)}, region, zone, region_lc, zone_lc FROM offers "
        f"WHERE NOT (price_key >= ?) ORDER BY price_key {direction}, id {direction}",
        (MISSING,),
    )
    found: list[tuple[int, list[tuple[Any, ...]]]] = []
    group: dict[tuple[Any, ...], list[Any]] = {}  # the listings at one price key: [lowest id, places]
    price: Any = object()
    width = len(LISTING_KEY) + 2

    def close() -> None:
        """Append the listings of the price key just walked, in id order."""
        ordered = sorted(group.values(), key=lambda item: item[0], reverse=descending)
        found.extend((lowest, places) for lowest, places in ordered)
        group.clear()

    for row in cursor:
        if row[1] != price:
            close()
            if len(found) >= wanted:
                break
            price = row[1]
        item = group.setdefault(row[2:width], [row[0], []])
        item[0] = min(item[0], row[0])
        item[1].append(row[width:])
    else:
        close()
    cursor.close()
    return found[:wanted]


def _places(places: list[tuple[Any, ...]]) -> list[tuple[Any, Any]]:
    """A listing's distinct (region, zone) in SQLite's order (NULL first), as its store rows hold them."""
    distinct = {place for place in places}
    return [(region, zone) for region, zone, _, _ in sorted(distinct, key=_sql_order)]


def _sql_order(place: tuple[Any, ...]) -> tuple[Any, ...]:
    """A sort key ordering NULLs before text, as SQLite does."""
    return tuple((value is not None, value or "") for value in place)


def catalog_page(catalog: Path, query: CompareQuery) -> dict[str, Any] | None:
    """A view opens_on serves (any view sorted by price without a job or filter) from the catalog, as the store
    will serve it; None when the page reaches past the listings with a price (the store's order continues with the
    missing ones)."""
    start = (query.page - 1) * query.page_size
    with closing(_connect(catalog)) as conn:
        walked = _listings(conn, start + query.page_size, query.order == "desc")
        if len(walked) < start + query.page_size:
            return None
        total, offers, snapshot, facets = _head(conn, store_path(catalog).name)
        page = walked[start:]
        ids = [lowest for lowest, _ in page]
        reps = {row[0]: row for row in conn.execute(_ROW_SQL, (json_list(ids),))}
    found = []
    places = {}
    for lowest, listed in page:
        rep = reps[lowest]
        found.append((*rep, *billing_of(rep[1]), len(listed)))
        places[lowest] = _places(listed)
    return {
        "offers": offers,
        "total": total,
        "page": query.page,
        "page_size": query.page_size,
        "pages": max(1, -(-total // query.page_size)),
        "sort": "price",
        "order": query.order,
        "snapshot_date": snapshot,
        "facets": facets,
        "rows": shaped_rows(found, places, False),
        "job": None,
    }


def json_list(ids: list[int]) -> str:
    """Integers as a JSON array (for json_each)."""
    return "[" + ",".join(str(int(i)) for i in ids) + "]"
