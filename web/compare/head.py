"""The comparison table's first pages read from the catalog file itself while its store is being built
(web.compare.store): what a person opens first (no job, no filter, sorted by price, either order, the first
EARLY_ROWS rows) is exactly what the store will answer, so that paging on after the store is ready stays consistent.

A listing is the catalog's offers that share provider, instance type, price pair and hardware shape; its id is its
lowest offer id (the store's). All of a listing's offers share its price key, so walking the catalog's price index
one price at a time yields whole listings in the store's (price, id) order. The count of listings, the facets, the
offer count and the snapshot date (the head) are the summary the catalog was written with (tools.catalog.listings);
a catalog written without one has them counted once per version, before the store is built (a DISTINCT over every
offer: about 0.15 s on 100k offers, 1.3 s on 1M), and recorded beside the store."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from contextlib import closing
from pathlib import Path
from typing import Any

from tools.catalog import LISTING_KEY, MISSING, ListingSummary, count_listings, offers_and_facets, recorded_summary
from tools.lru import Lru
from web.compare.data import CompareQuery, filters_sql, shaped_rows
from web.compare.store import billing_of, file_lock, store_path
from web.compare.store import warm as warm_store

EARLY_ROWS = 1000
"""Views whose page ends within this many rows are served from the catalog while the store is built."""
Head = ListingSummary
"""(listings, offers, snapshot date, facets) of one catalog version."""
_heads: Lru[str, Head] = Lru(4)
_head_locks: Lru[str, threading.Lock] = Lru(16)
_ROW_SQL = (
    "SELECT id, provider, instance_type, gpu, gpu_form_factor, gpu_count, vram_gib_per_gpu, interconnect, region, "
    "price_per_hour, spot_price_per_hour, price_per_hour * 1.0 / gpu_count, snapshot_date FROM offers "
    "WHERE id IN (SELECT value FROM json_each(?))"
)


def warm(catalog: Path) -> threading.Thread:
    """Prepare a catalog version in the background: its head first (the first pages need only that), then its store
    (web.compare.store.warm; one thread per store and process)."""
    missing = not store_path(catalog).exists()
    return warm_store(catalog, first=(lambda: ensure_head(catalog)) if missing else None)


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


def ensure_head(catalog: Path) -> Head:
    """The catalog version's head: kept per process, recorded beside its store (other workers and restarts read it),
    else read from the catalog (the count of listings in one connection, the rest in another, in parallel)."""
    key = store_path(catalog)
    found = _heads.get(key.name)
    if found is not None:
        return found
    with _head_locks.get_or_make(key.name, threading.Lock), file_lock(key, ".compare-head.lock"):
        found = _heads.get(key.name) or _recorded(key)
        if found is None:
            found = _read_head(catalog)
            _record(key, found)
        return _heads.put(key.name, found)


def _head_file(store: Path) -> Path:
    """Where a store's head is recorded."""
    return store.with_name(store.name.removesuffix(".sqlite") + ".head.json")


def _recorded(store: Path) -> Head | None:
    """The head recorded for this store, if any."""
    try:
        total, offers, snapshot, facets = json.loads(_head_file(store).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return int(total), int(offers), snapshot, {kind: list(values) for kind, values in facets.items()}


def _record(store: Path, found: Head) -> None:
    """Record the head beside the store (atomically; best effort)."""
    path = _head_file(store)
    partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.part")
    try:
        partial.write_text(json.dumps(found), "utf-8")
        os.replace(partial, path)
    except OSError:
        partial.unlink(missing_ok=True)


def _read_head(catalog: Path) -> Head:
    """The summary the catalog was written with (tools.catalog.listings), else counted: the listings in one
    connection while another reads the offers' count, latest snapshot date and facets; an error in either is raised
    here, once, after both have ended."""
    with closing(_connect(catalog)) as conn:
        found = recorded_summary(conn)
    if found is not None:
        return found
    counted: list[int | sqlite3.Error] = []

    def count() -> None:
        """The number of distinct listing keys, or the error that stopped it."""
        try:
            with closing(_connect(catalog)) as conn:
                counted.append(count_listings(conn))
        except sqlite3.Error as error:
            counted.append(error)

    worker = threading.Thread(target=count, name="compare-head", daemon=True)
    worker.start()
    try:
        with closing(_connect(catalog)) as conn:
            offers, snapshot, facets = offers_and_facets(conn)
    finally:
        worker.join()
    if not counted:
        raise RuntimeError("the catalog's listings could not be counted")
    if isinstance(counted[0], sqlite3.Error):
        raise counted[0]
    return counted[0], offers, snapshot, facets


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
    total, offers, snapshot, facets = ensure_head(catalog)
    with closing(_connect(catalog)) as conn:
        walked = _listings(conn, start + query.page_size, query.order == "desc")
        if len(walked) < start + query.page_size:
            return None
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
