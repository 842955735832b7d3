"""The comparison store's build (web.compare.store._build), which groups only the listings of several offers and
reads every other offer once in id order, gives the reference build's tables (tests/test_compare_build.py) where
that is hardest: every listing grouped from several offers, listings whose key has a NULL (no places, as the
reference's join on the listing key gave them), offers without a provider (no row), and rows, places and facets
written in the reference's order (rows by id, places by listing then region and zone, facets as first met)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from tests.priced_copies import copied_catalog
from tests.test_compare_build import _tables, reference_build
from web.compare import store


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped snapshot three times over (two copies at its prices: listings of several offers), some
    instance types with no spot key, no on-demand key or no instance type."""
    path = copied_catalog(tmp_path_factory.mktemp("compare-store-speed") / "edges.sqlite", [1.0, 1.0, 0.85])
    with closing(sqlite3.connect(path)) as conn:
        types = [t for (t,) in conn.execute("SELECT DISTINCT instance_type FROM offers ORDER BY instance_type")]
        conn.execute(f"UPDATE offers SET spot_key = NULL WHERE instance_type IN ({','.join('?' * 5)})", types[0:5])
        conn.execute(f"UPDATE offers SET price_key = NULL WHERE instance_type IN ({','.join('?' * 3)})", types[5:8])
        conn.execute(
            f"UPDATE offers SET instance_type = NULL WHERE instance_type IN ({','.join('?' * 2)})", types[8:10]
        )
        conn.commit()
    return path


def test_edge_catalog_builds_the_reference_tables_in_the_reference_order(catalog: Path, tmp_path: Path) -> None:
    reference_build(catalog, tmp_path / "reference.sqlite")
    store._build(catalog, tmp_path / "built.sqlite")
    expected, built = _tables(tmp_path / "reference.sqlite"), _tables(tmp_path / "built.sqlite")
    assert any(offers > 1 for offers in _column(tmp_path / "built.sqlite", "SELECT offers FROM rows"))
    for table in expected:
        assert built[table] == expected[table], table
    path = tmp_path / "built.sqlite"
    ids = _column(path, "SELECT id FROM rows ORDER BY rowid")
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    places = _column(path, "SELECT row_id, region, zone FROM places ORDER BY rowid")
    assert places == sorted(places, key=lambda p: (p[0], p[1] is not None, p[1] or "", p[2] is not None, p[2] or ""))
    assert not _column(path, "SELECT row_id FROM places WHERE row_id IN (SELECT id FROM rows WHERE spot_key IS NULL)")
    for kind, column in (("gpus", "gpu"), ("providers", "provider"), ("interconnects", "interconnect")):
        first_met = list(dict.fromkeys(_column(path, f"SELECT {column} FROM rows ORDER BY rowid")))
        assert _column(path, f"SELECT value FROM facets WHERE kind = '{kind}' ORDER BY rowid") == first_met


def _column(path: Path, sql: str) -> list[Any]:
    """The rows of a one-column (or several-column) query, a single column as plain values."""
    with closing(sqlite3.connect(path)) as conn:
        rows = conn.execute(sql).fetchall()
    return [row[0] if len(row) == 1 else row for row in rows]
