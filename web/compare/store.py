"""The comparison table's listings in SQLite: one derived file per catalog version, so that any catalog size is
filtered, sorted and paged by SQLite instead of in Python memory.

A listing is one instance at one price pair (provider, instance type, on-demand and spot $/h): the regions and zones
that offer it are grouped into it (`places` keeps one row per region and zone for the region filter). Each listing
points at its hardware shape (`shapes`: GPU, count, memory, links, fabric, provider, market price), the unit a job
is costed on (web.compare.costs). The file is built once per catalog file version (device, inode, size, mtime) into
the private temp folder, atomically, and shared by every worker of the machine."""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from tools.catalog import SHAPE_COLUMNS, private_data_folder
from tools.jobtime import ASSUMED_BILLING, billing_for

STORE_VERSION = 8
SORT_INDEXES = (
    "price_key",
    "spot_key",
    "ppg_key",
    "vram_key",
    "gpu_lc",
    "gpu_count",
    "interconnect",
    "provider_lc",
    "region_lc",
    "billing_s",
)

OD_PRICE = "(CASE WHEN r.on_demand_is_market THEN NULL ELSE r.price_per_hour END)"
"""A listing's on-demand $/h as a job is costed on it (tools.catalog's effective_prices): none when the listed price
is a market price."""
SPOT_PRICE = (
    "(CASE WHEN r.on_demand_is_market THEN coalesce(nullif(r.spot_price_per_hour, 0), r.price_per_hour) "
    "ELSE r.spot_price_per_hour END)"
)
"""A listing's spot $/h as a job is costed on it: the market price when the listed on-demand price is one."""
PRICE_ARRAYS = {"id": "<i8", "shape": "<i4", "od": "<f8", "sp": "<f8"}
"""The arrays the store keeps of every listing in id order: its id (its lowest offer id), shape and OD_PRICE and
SPOT_PRICE (NaN for none), for pricing a new job in memory (web.compare.early)."""

_build_lock = threading.Lock()


def _signature(catalog: Path) -> str:
    """A name for one version of the catalog file: the file itself (device and inode), not its path, so that a
    catalog prepared under a temp name keeps its store when it is renamed into place (tools.catalog.build_db)."""
    stat = catalog.stat()
    text = f"{stat.st_dev}|{stat.st_ino}|{stat.st_size}|{stat.st_mtime_ns}|{STORE_VERSION}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def store_path(catalog: Path) -> Path:
    """Where the derived listings of this catalog version live."""
    folder = private_data_folder() or Path(os.environ.get("TMPDIR", "/tmp"))
    return folder / f"compare-{_signature(catalog)}.sqlite"


BUSY_TIMEOUT_S = 30
"""How long a store connection waits for another's write lock (seconds)."""


def connect(path: Path) -> sqlite3.Connection:
    """A connection to a built store (job tables are written through it, see web.compare.costs; the store is in WAL
    mode, so pages are read while a job table is written)."""
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA cache_size = -16000")  # 16 MB page cache: RSS stays flat at any catalog size
    conn.execute("PRAGMA temp_store = FILE")
    return conn


def ensure_store(catalog: Path) -> Path:
    """The derived listings file of `catalog`, built on first use (once per catalog version and machine)."""
    path = store_path(catalog)
    if path.exists():
        return path
    with _build_lock, file_lock(path):
        if path.exists():
            return path
        partial = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.part")
        try:
            _build(catalog, partial)
            os.replace(partial, path)
        finally:
            partial.unlink(missing_ok=True)
        _remove_older(path)
    return path


@contextmanager
def file_lock(path: Path, name: str = ".compare-build.lock") -> Iterator[None]:
    """An exclusive lock file `name` beside the store while it is built (or its head read, web.compare.head), so
    that workers starting together do it once."""
    try:
        import fcntl
    except ImportError:  # Windows: builds stay atomic, maybe twice
        yield
        return
    with open(path.with_name(name), "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def warm(catalog: Path, first: Callable[[], object] | None = None) -> threading.Thread:
    """Build the store in a background thread (at server start, or when a page is served from the catalog before
    it, web.compare.head), one per store and process, `first` run before it: the first page does not wait."""
    path = store_path(catalog)
    with _warm_lock:
        thread = _warming.get(path)
        if thread is None or not thread.is_alive():
            for done in [p for p, t in _warming.items() if not t.is_alive()]:
                del _warming[done]

            def run() -> None:
                """first() then ensure_store, a failure only logged (the first request will say what is wrong)."""
                log = logging.getLogger("gpu_advisor.web")
                try:
                    if first is not None:
                        first()
                except Exception as error:
                    log.warning("compare table's first pages not prepared: %s", error)
                try:
                    ensure_store(catalog)
                except Exception as error:
                    log.warning("compare table not prepared: %s", error)

            thread = _warming[path] = threading.Thread(target=run, name="compare-warm", daemon=True)
            thread.start()
    return thread


_warm_lock = threading.Lock()
_warming: dict[Path, threading.Thread] = {}


_indexed: set[tuple[str, str]] = set()


def sort_index(conn: sqlite3.Connection, path: Path, column: str) -> None:
    """Create the index of one sort column on first use (a second or so on a million listings, once per store)."""
    if column not in SORT_INDEXES or (str(path), column) in _indexed:
        return
    with _build_lock:
        conn.execute(f"CREATE INDEX IF NOT EXISTS rows_{column} ON rows ({column}, price_key, id)")
        _indexed.add((str(path), column))


def _remove_older(current: Path) -> None:
    """Delete stores built more than a week before this one (catalog versions long gone; a store still in use is
    simply built again): two catalogs in use on one machine never delete each other's store."""
    for other in [*current.parent.glob("compare-*.sqlite"), *current.parent.glob("compare-*.head.json")]:
        try:
            if (
                other.name.split(".")[0] != current.name.split(".")[0]
                and other.stat().st_mtime < current.stat().st_mtime - 7 * 86400
            ):
                other.unlink(missing_ok=True)
        except OSError:
            continue


def billing_of(provider: str) -> tuple[float | int, int]:
    """(billing seconds, assumed) of a provider, as the store's billing table holds them (INTEGER affinity: a whole
    number of seconds is an integer)."""
    rule, _ = billing_for(provider)
    seconds = rule.granularity_s
    return int(seconds) if float(seconds).is_integer() else seconds, int(rule is ASSUMED_BILLING)


def _billing_rows(conn: sqlite3.Connection) -> list[tuple[str, float | int, int]]:
    """(provider, billing seconds, assumed) for every provider of the catalog."""
    return [
        (provider, *billing_of(provider)) for (provider,) in conn.execute("SELECT DISTINCT provider FROM cat.offers")
    ]


def _build(catalog: Path, path: Path) -> None:
    """Write the store: shapes, listings (regions and zones grouped), places, meta, indexes.

    The offers pass through SQLite about four times: the distinct shapes, each offer with its shape (`tagged`, in
    id order), one sort of them that groups the few listings of several offers, then the listings (`rows`) and
    `places` both read in id order, a listing's id (its lowest offer id) being where it first appears."""
    shape_cols = ", ".join(SHAPE_COLUMNS)
    same = " AND ".join(f"s.{c} IS o.{c}" for c in SHAPE_COLUMNS)
    key = "provider, instance_type, price_key, spot_key, shape_id"  # a listing: one instance at one price pair
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("PRAGMA cache_size = -32000")
        conn.execute("ATTACH DATABASE ? AS cat", (f"file:{catalog.resolve().as_posix()}?mode=ro",))
        conn.execute("BEGIN")
        conn.execute("CREATE TABLE billing (provider TEXT PRIMARY KEY, billing_s INTEGER, billing_assumed INTEGER)")
        conn.executemany("INSERT INTO billing VALUES (?, ?, ?)", _billing_rows(conn))
        conn.execute(f"CREATE TABLE shapes (id INTEGER PRIMARY KEY, {shape_cols}, rep_id INTEGER)")
        # a few hundred, kept in a small index as the offers pass in table order (NOT INDEXED: the catalog's
        # provider index would cost a table seek per offer), not a sort of every offer; ids in GROUP BY order
        conn.execute(f"CREATE TEMP TABLE shape_set AS SELECT DISTINCT {shape_cols} FROM cat.offers NOT INDEXED")
        conn.execute(f"INSERT INTO shapes ({shape_cols}) SELECT {shape_cols} FROM temp.shape_set ORDER BY {shape_cols}")
        conn.execute("CREATE INDEX shapes_key ON shapes (" + shape_cols + ")")
        # each shape's id beside its columns typed as the offers' (shapes' are untyped), so that an offer finds its
        # shape by one seek on every column
        conn.execute(
            f"CREATE TEMP TABLE shape_ids AS SELECT {', '.join(f'o.{c}' for c in SHAPE_COLUMNS)}, s.id "
            f"FROM temp.shape_set o JOIN shapes s ON {same}"
        )
        conn.execute(f"CREATE INDEX temp.shape_ids_key ON shape_ids ({shape_cols}, id)")
        conn.execute(  # every offer with its shape, in id order (its rowid): the steps below read it in that order
            "CREATE TEMP TABLE tagged (offer_id INTEGER PRIMARY KEY, shape_id INTEGER, provider TEXT, "
            "instance_type TEXT, price_key REAL, spot_key REAL, region TEXT, zone TEXT, region_lc TEXT, zone_lc TEXT)"
        )
        conn.execute(
            "INSERT INTO temp.tagged SELECT o.id, s.id, o.provider, o.instance_type, o.price_key, o.spot_key, o.region, "
            f"o.zone, o.region_lc, o.zone_lc FROM cat.offers o JOIN temp.shape_ids s ON {same} ORDER BY o.id"
        )
        # Nearly every listing is one offer: one sort of the offers gives the listings of several (regions and zones
        # in offer id order, as a GROUP BY of every listing gave them), then each of their offers with the
        # listing's id (its lowest offer id)
        conn.execute("CREATE TEMP TABLE listed (rep INTEGER PRIMARY KEY, offers, places_lc, ids)")
        conn.execute(
            "INSERT INTO temp.listed SELECT CAST(min(offer_id) AS INTEGER), count(*), "
            "coalesce(group_concat(DISTINCT region_lc), '') || ' ' || coalesce(group_concat(DISTINCT zone_lc), ''), "
            f"group_concat(offer_id) FROM temp.tagged GROUP BY {key} HAVING count(*) > 1 ORDER BY 1"
        )
        conn.execute("CREATE TEMP TABLE grouped (offer_id INTEGER PRIMARY KEY, rep INTEGER)")
        conn.execute(
            "INSERT INTO temp.grouped SELECT j.value, l.rep FROM temp.listed l, json_each('[' || l.ids || ']') j "
            "ORDER BY 1"
        )
        # a listing is its first offer's row (in id order, so rows come in id order): a lone offer's places are its
        # own region and zone
        places_lc = (
            "(CASE WHEN l.rep IS NULL THEN coalesce(t.region_lc, '') || ' ' || coalesce(t.zone_lc, '') "
            "ELSE l.places_lc END)"
        )
        conn.execute(
            "CREATE TABLE rows AS SELECT CAST(t.offer_id AS INTEGER) AS id, t.shape_id, coalesce(l.offers, 1) AS offers, "
            "o.provider, o.provider_lc, o.upstream_lc, o.instance_type, o.gpu, o.gpu_lc, o.gpu_form_factor, "
            "o.gpu_count, o.vram_gib_per_gpu, o.vram_key, o.interconnect, o.price_per_hour, o.spot_price_per_hour, "
            "o.price_per_hour * 1.0 / o.gpu_count AS price_per_gpu_hour, t.price_key, t.spot_key, o.ppg_key, "
            "o.snapshot_date, o.on_demand_is_market, b.billing_s, b.billing_assumed, o.region AS region, "
            f"o.region_lc AS region_lc, {places_lc} AS places_lc, "
            f"o.gpu_lc || ' ' || o.provider_lc || ' ' || lower(o.instance_type) || ' ' || {places_lc} AS words "
            "FROM temp.tagged t LEFT JOIN temp.grouped g ON g.offer_id = t.offer_id LEFT JOIN temp.listed l "
            "ON l.rep = t.offer_id CROSS JOIN cat.offers o ON o.id = t.offer_id CROSS JOIN billing b "
            "ON b.provider = o.provider WHERE g.rep IS NULL OR g.rep = t.offer_id ORDER BY t.offer_id"
        )
        # a listing's distinct regions and zones (none where a key column is NULL: a listing key never equals one)
        known = "t.provider IS NOT NULL AND t.instance_type IS NOT NULL AND t.price_key IS NOT NULL AND t.spot_key IS NOT NULL"
        conn.execute(  # lone offers in id order, merged with the grouped listings' places
            "CREATE TABLE places AS SELECT t.offer_id AS row_id, t.region, t.zone, t.region_lc, t.zone_lc "
            f"FROM temp.tagged t LEFT JOIN temp.grouped g ON g.offer_id = t.offer_id WHERE g.rep IS NULL AND {known} "
            "UNION ALL SELECT * FROM (SELECT DISTINCT g.rep, t.region, t.zone, t.region_lc, t.zone_lc "
            f"FROM temp.grouped g CROSS JOIN temp.tagged t ON t.offer_id = g.offer_id WHERE {known}) ORDER BY 1, 2, 3"
        )
        # the temp tables go with the connection (dropping them costs a pass over their pages; ANALYZE main skips them)
        conn.execute("CREATE INDEX places_row ON places (row_id)")
        conn.execute("CREATE INDEX places_region ON places (region_lc, row_id)")
        conn.execute("CREATE INDEX places_zone ON places (zone_lc, row_id)")
        conn.execute("CREATE INDEX rows_price_key ON rows (price_key, price_key, id)")  # the default sort; the
        # other sorts get their index on first use (sort_index), which keeps the build about 40 % shorter
        conn.execute("CREATE UNIQUE INDEX rows_id ON rows (id)")
        conn.execute("CREATE INDEX rows_shape ON rows (shape_id, id)")
        conn.execute("ALTER TABLE shapes ADD COLUMN rows INTEGER")
        conn.execute(  # a shape's representative: its lowest offer id, the lowest of its listings' (one index seek)
            "UPDATE shapes SET rows = (SELECT count(*) FROM rows r WHERE r.shape_id = shapes.id), "
            "rep_id = (SELECT min(r.id) FROM rows r WHERE r.shape_id = shapes.id)"
        )
        conn.execute(  # each value is first met on a shape's first row (a shape's rows share its gpu, provider and
            # interconnect): those few rows in id order list the values as a pass over every row did
            "CREATE TABLE facets AS WITH firsts(at) AS (SELECT r.rowid FROM rows r WHERE r.id IN (SELECT rep_id FROM shapes)) "
            "SELECT DISTINCT 'gpus' AS kind, gpu AS value FROM rows WHERE rowid IN firsts "
            "UNION ALL SELECT DISTINCT 'providers', provider FROM rows WHERE rowid IN firsts "
            "UNION ALL SELECT DISTINCT 'interconnects', interconnect FROM rows WHERE rowid IN firsts"
        )
        conn.execute(
            "CREATE TABLE meta AS SELECT count(*) AS offers, max(snapshot_date) AS snapshot_date FROM cat.offers"
        )
        conn.execute("CREATE TABLE jobs (name TEXT PRIMARY KEY, used REAL)")
        write_price_arrays(conn)
        conn.execute("COMMIT")
        conn.execute("DETACH DATABASE cat")
        conn.execute("ANALYZE main")
        conn.execute("PRAGMA journal_mode = WAL")


def write_price_arrays(conn: sqlite3.Connection) -> None:
    """Store PRICE_ARRAYS: every listing's shape and effective prices in id order, one blob each."""
    import numpy as np

    count = conn.execute("SELECT count(*) FROM rows").fetchone()[0]
    nan = float("nan")
    values = np.fromiter(
        (
            (row_id, shape, nan if od is None else od, nan if sp is None else sp)
            for row_id, shape, od, sp in conn.execute(
                f"SELECT r.id, r.shape_id, {OD_PRICE}, {SPOT_PRICE} FROM rows r ORDER BY r.id"
            )
        ),
        dtype=[(name, kind) for name, kind in PRICE_ARRAYS.items()],
        count=count,
    )
    conn.execute("CREATE TABLE price_arrays (name TEXT PRIMARY KEY, data BLOB)")
    conn.executemany(
        "INSERT INTO price_arrays VALUES (?, ?)",
        [(name, np.ascontiguousarray(values[name]).tobytes()) for name in PRICE_ARRAYS],
    )
