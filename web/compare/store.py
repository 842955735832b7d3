"""The comparison table's listings in SQLite: one derived file per catalog version, so that any catalog size is
filtered, sorted and paged by SQLite instead of in Python memory.

A listing is one instance at one price pair (provider, instance type, on-demand and spot $/h): the regions and zones
that offer it are grouped into it (`places` keeps one row per region and zone for the region filter). Each listing
points at its hardware shape (`shapes`: GPU, count, memory, links, fabric, provider, market price), the unit a job
is costed on (web.compare.costs). The file is built once per catalog file version (inode, size, mtime) into the
private temp folder, atomically, and shared by every worker of the machine."""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from tools.catalog import private_data_folder
from tools.jobtime import ASSUMED_BILLING, billing_for

STORE_VERSION = 8
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
    """A name for one version of the catalog file."""
    stat = catalog.stat()
    text = f"{catalog.resolve()}|{stat.st_ino}|{stat.st_size}|{stat.st_mtime_ns}|{STORE_VERSION}"
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
    """Write the store: shapes, listings (regions and zones grouped), places, meta, indexes."""
    shape_cols = ", ".join(SHAPE_COLUMNS)
    same = " AND ".join(f"s.{c} IS o.{c}" for c in SHAPE_COLUMNS)
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("PRAGMA cache_size = -32000")
        conn.execute("ATTACH DATABASE ? AS cat", (f"file:{catalog.resolve().as_posix()}?mode=ro",))
        conn.execute("BEGIN")
        conn.execute("CREATE TABLE billing (provider TEXT PRIMARY KEY, billing_s INTEGER, billing_assumed INTEGER)")
        conn.executemany("INSERT INTO billing VALUES (?, ?, ?)", _billing_rows(conn))
        conn.execute(f"CREATE TABLE shapes (id INTEGER PRIMARY KEY, {shape_cols}, rep_id INTEGER)")
        conn.execute(f"CREATE TEMP TABLE shape_set AS SELECT DISTINCT {shape_cols} FROM cat.offers")  # a few hundred
        # kept in a small index as the offers pass, not a sort of every offer; ids in GROUP BY order, as before
        conn.execute(f"INSERT INTO shapes ({shape_cols}) SELECT {shape_cols} FROM temp.shape_set ORDER BY {shape_cols}")
        conn.execute("DROP TABLE temp.shape_set")
        conn.execute("CREATE INDEX shapes_key ON shapes (" + shape_cols + ")")
        conn.execute(
            "CREATE TEMP TABLE tagged AS SELECT o.id AS offer_id, s.id AS shape_id, o.provider, o.instance_type, "
            "o.price_key, o.spot_key, o.region_lc, o.zone_lc FROM cat.offers o JOIN shapes s ON " + same
        )
        conn.execute(
            "CREATE TABLE listings AS SELECT CAST(min(t.offer_id) AS INTEGER) AS rep_id, t.shape_id, t.provider, t.instance_type, "
            "t.price_key, t.spot_key, count(*) AS offers, coalesce(group_concat(DISTINCT t.region_lc), '') || ' ' || "
            "coalesce(group_concat(DISTINCT t.zone_lc), '') AS places_lc FROM tagged t "
            "GROUP BY t.provider, t.instance_type, t.price_key, t.spot_key, t.shape_id ORDER BY min(t.offer_id)"
        )
        conn.execute(
            "CREATE TABLE rows AS SELECT l.rep_id AS id, l.shape_id, l.offers, o.provider, o.provider_lc, "
            "o.upstream_lc, o.instance_type, o.gpu, o.gpu_lc, o.gpu_form_factor, o.gpu_count, o.vram_gib_per_gpu, "
            "o.vram_key, o.interconnect, o.price_per_hour, o.spot_price_per_hour, o.price_per_hour * 1.0 / o.gpu_count AS price_per_gpu_hour, "
            "l.price_key, l.spot_key, o.ppg_key, o.snapshot_date, o.on_demand_is_market, b.billing_s, "
            "b.billing_assumed, o.region AS region, o.region_lc AS region_lc, l.places_lc, "
            "o.gpu_lc || ' ' || o.provider_lc || ' ' || lower(o.instance_type) || ' ' || l.places_lc AS words "
            "FROM listings l JOIN cat.offers o ON o.id = l.rep_id JOIN billing b ON b.provider = o.provider"
        )
        conn.execute(
            "CREATE UNIQUE INDEX listing_key ON listings (provider, instance_type, price_key, spot_key, shape_id)"
        )
        conn.execute(
            "CREATE TABLE places AS SELECT DISTINCT l.rep_id AS row_id, o.region, o.zone, o.region_lc, o.zone_lc "
            "FROM cat.offers o JOIN tagged t ON t.offer_id = o.id JOIN listings l ON l.provider = t.provider "
            "AND l.instance_type = t.instance_type AND l.price_key = t.price_key AND l.spot_key = t.spot_key "
            "AND l.shape_id = t.shape_id ORDER BY l.rowid, o.region, o.zone"
        )
        conn.execute("DROP TABLE listings")
        conn.execute("DROP TABLE temp.tagged")
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
        conn.execute(
            "CREATE TABLE facets AS SELECT DISTINCT 'gpus' AS kind, gpu AS value FROM rows "
            "UNION ALL SELECT DISTINCT 'providers', provider FROM rows "
            "UNION ALL SELECT DISTINCT 'interconnects', interconnect FROM rows"
        )
        conn.execute(
            "CREATE TABLE meta AS SELECT count(*) AS offers, max(snapshot_date) AS snapshot_date FROM cat.offers"
        )
        conn.execute("CREATE TABLE jobs (name TEXT PRIMARY KEY, used REAL)")
        write_price_arrays(conn)
        conn.execute("COMMIT")
        conn.execute("DETACH DATABASE cat")
        conn.execute("ANALYZE")
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
