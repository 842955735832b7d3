"""The comparison store's build (web.compare.store._build) gives, table for table and value for value, what the
store's first version-8 build gave (kept here statement for statement as the reference): shapes with their
representative and row counts, listings, places, facets, meta, billing and the price arrays. Real SQLite catalogs
in tmp_path: the shipped snapshot and one whose listings group several offers."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from tests.priced_copies import copied_catalog
from tools.catalog import build_from_snapshot
from web.compare import store

TABLES = {
    "shapes": "id",
    "rows": "id",
    "places": "row_id, region, zone",
    "facets": "kind, value",
    "meta": "offers",
    "billing": "provider",
    "price_arrays": "name",
    "jobs": "name",
}
"""Every table of a store and an order that lists its rows whatever order they were written in."""


@pytest.fixture(scope="module")
def catalogs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The shipped snapshot, and its rows in four more regions, two at its prices and two at 0.85 times them."""
    folder = tmp_path_factory.mktemp("compare-build")
    return [
        build_from_snapshot(folder / "snapshot.sqlite"),
        copied_catalog(folder / "grouped.sqlite", [1.0, 1.0, 1.0, 0.85, 0.85]),
    ]


def _tables(path: Path) -> dict[str, list[tuple]]:
    """Every table's rows in TABLES' order, and the names of the indexes."""
    with closing(sqlite3.connect(path)) as conn:
        names = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert names - {"sqlite_stat1"} == set(TABLES)
        found = {
            table: conn.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall() for table, order in TABLES.items()
        }
        found["columns"] = [
            (table, *column) for table in TABLES for column in conn.execute(f"PRAGMA table_info({table})").fetchall()
        ]
        found["indexes"] = sorted(
            conn.execute("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index'").fetchall()
        )
    return found


@pytest.mark.parametrize("which", [0, 1])
def test_the_build_gives_the_reference_stores_tables(catalogs, which, tmp_path):
    catalog = catalogs[which]
    reference_build(catalog, tmp_path / "reference.sqlite")
    store._build(catalog, tmp_path / "built.sqlite")
    expected, built = _tables(tmp_path / "reference.sqlite"), _tables(tmp_path / "built.sqlite")
    assert len(expected["rows"]) < len(expected["places"]) and expected["shapes"]
    for table in expected:
        assert built[table] == expected[table], table


def reference_build(catalog: Path, path: Path) -> None:
    """The store as STORE_VERSION 8 first built it (one GROUP BY of every offer per shape, the places joined back
    to the offers, facets by GROUP BY), statement for statement."""
    shape_cols = ", ".join(store.SHAPE_COLUMNS)
    same = " AND ".join(f"s.{c} IS o.{c}" for c in store.SHAPE_COLUMNS)
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("PRAGMA cache_size = -32000")
        conn.execute("ATTACH DATABASE ? AS cat", (f"file:{catalog.resolve().as_posix()}?mode=ro",))
        conn.execute("BEGIN")
        conn.execute("CREATE TABLE billing (provider TEXT PRIMARY KEY, billing_s INTEGER, billing_assumed INTEGER)")
        conn.executemany("INSERT INTO billing VALUES (?, ?, ?)", store._billing_rows(conn))
        conn.execute(f"CREATE TABLE shapes (id INTEGER PRIMARY KEY, {shape_cols}, rep_id INTEGER)")
        conn.execute(
            f"INSERT INTO shapes ({shape_cols}, rep_id) SELECT {shape_cols}, min(id) FROM cat.offers "
            f"GROUP BY {shape_cols}"
        )
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
        conn.execute("CREATE INDEX rows_shape ON rows (shape_id)")
        conn.execute("ALTER TABLE shapes ADD COLUMN rows INTEGER")
        conn.execute("UPDATE shapes SET rows = (SELECT count(*) FROM rows r WHERE r.shape_id = shapes.id)")
        conn.execute(
            "CREATE TABLE facets AS SELECT 'gpus' AS kind, gpu AS value FROM rows GROUP BY gpu "
            "UNION ALL SELECT 'providers', provider FROM rows GROUP BY provider "
            "UNION ALL SELECT 'interconnects', interconnect FROM rows GROUP BY interconnect"
        )
        conn.execute(
            "CREATE TABLE meta AS SELECT count(*) AS offers, max(snapshot_date) AS snapshot_date FROM cat.offers"
        )
        conn.execute("CREATE TABLE jobs (name TEXT PRIMARY KEY, used REAL)")
        store.write_price_arrays(conn)
        conn.execute("COMMIT")
        conn.execute("DETACH DATABASE cat")
        conn.execute("ANALYZE")
        conn.execute("PRAGMA journal_mode = WAL")
