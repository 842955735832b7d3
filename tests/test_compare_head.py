"""The comparison table's first pages served from the catalog file while its store is being built
(web.compare.head): field for field the pages the built store gives (rows, order, total, facets, offers, snapshot
date), both orders and the first pages, on the shipped catalog and on a larger one whose listings group several
offers (the same prices in duplicated regions). Real SQLite catalogs in tmp_path."""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from tests.priced_copies import copied_catalog
from tools.catalog import build_from_snapshot, listings
from web.compare import compare_page, head
from web.compare import page as page_module
from web.compare.data import CompareQuery
from web.compare.store import ensure_store, store_path

FACTORS = [1.0, 1.0, 1.0, 0.85, 0.85]
"""Copies 1 and 2 repeat the original's prices in other regions (one listing each, three offers), copy 4 repeats
copy 3's."""
VIEWS = [
    {},
    {"order": "desc"},
    {"sort": "price"},
    {"page": 2},
    {"page": 3, "order": "desc"},
    {"page_size": 7, "page": 4},
    {"page_size": 7, "page": 5, "order": "desc"},
    *({"page_size": 200, "page": n, "order": order} for n in range(1, 6) for order in ("asc", "desc")),
]
"""Views served from the catalog: no job or filter, sorted by price, within head.EARLY_ROWS."""


@pytest.fixture(scope="module")
def catalogs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The shipped snapshot, and its rows copied at FACTORS."""
    folder = tmp_path_factory.mktemp("compare-head")
    grouped = copied_catalog(folder / "grouped.sqlite", FACTORS)
    return {
        "shipped": build_from_snapshot(folder / "snapshot.sqlite"),
        "grouped": grouped,
        "unsummarised": _unsummarised(Path(shutil.copy(grouped, folder / "unsummarised.sqlite"))),
    }


def _unsummarised(catalog: Path) -> Path:
    """The catalog as a writer that records no listing summary leaves it (another tool, an older version)."""
    with closing(sqlite3.connect(catalog)) as conn, conn:
        conn.execute("DELETE FROM meta WHERE key = ?", (listings.SUMMARY_KEY,))
    return catalog


def _dumped(result: dict) -> str:
    """A page as its JSON, keys sorted."""
    return json.dumps(result, sort_keys=True)


@pytest.mark.parametrize("name", ["shipped", "grouped", "unsummarised"])
def test_pages_before_the_store_are_the_stores_pages(catalogs, name, monkeypatch):
    catalog = catalogs[name]
    started: list[Path] = []
    monkeypatch.setattr(page_module, "build_soon", started.append)
    assert not store_path(catalog).exists()
    early = [compare_page(CompareQuery(**view), catalog) for view in VIEWS]
    assert not store_path(catalog).exists()  # every view above came from the catalog
    assert started and set(started) == {catalog}
    ensure_store(catalog)
    for view, served in zip(VIEWS, early, strict=True):
        stored = compare_page(CompareQuery(**view), catalog)
        assert served["rows"] and len(served["rows"]) == served["page_size"], view
        assert _dumped(served) == _dumped(stored), view
    first = early[0]
    assert first["offers"] > first["total"] > 1000
    if name != "shipped":
        assert first["offers"] == len(FACTORS) * compare_page(CompareQuery(), catalogs["shipped"])["offers"]
        assert any(row["offers"] >= 3 and len(row["regions"]) >= 3 for row in first["rows"])
    for order in ("asc", "desc"):  # the catalog's five pages of 200 are the store's first 1,000 rows
        pages = [e for v, e in zip(VIEWS, early, strict=True) if v.get("page_size") == 200 and v["order"] == order]
        stored = compare_page(CompareQuery(page_size=200, page=1, order=order), catalog)
        assert [row for p in pages for row in p["rows"]][:200] == stored["rows"]


def test_other_views_wait_for_the_store(catalogs, monkeypatch, tmp_path):
    """A filter, a job, another sort or a page past head.EARLY_ROWS is answered by the store (built on the spot)."""
    catalog = Path(shutil.copy(catalogs["grouped"], tmp_path / "copy.sqlite"))
    assert not store_path(catalog).exists()
    monkeypatch.setattr(page_module, "build_soon", lambda catalog: None)
    for view in ({"gpu": "H100"}, {"sort": "gpu"}, {"page": 30}, {"q": "aws"}):
        assert not head.opens_on(CompareQuery(**view)), view
    assert head.opens_on(CompareQuery(page=20)) and not head.opens_on(CompareQuery(page=21))
    deep = compare_page(CompareQuery(page=30), catalog)
    assert store_path(catalog).exists() and deep["rows"]


def test_a_catalog_whose_rows_end_before_the_page_is_left_to_the_store(catalogs, monkeypatch):
    """Past the listings with a price, the store's order (missing prices last) is not walked from the catalog."""
    catalog = catalogs["shipped"]
    monkeypatch.setattr(head, "EARLY_ROWS", 10**9)
    total = head.catalog_page(catalog, CompareQuery())
    assert total is not None
    last = -(-total["total"] // 200)
    assert head.catalog_page(catalog, CompareQuery(page_size=200, page=last + 1)) is None


def test_store_ids_are_the_listings_lowest_offer_ids_and_searched_by_index(catalogs):
    """The store's row id is what web.compare.head names a listing by (its lowest offer id), an INTEGER column that
    a job table's join looks up through its index (an untyped id would scan every row per job row)."""
    import sqlite3
    from contextlib import closing

    catalog = catalogs["grouped"]
    store = ensure_store(catalog)
    with closing(sqlite3.connect(catalog)) as cat:
        lowest = sorted(i for (i,) in cat.execute(f"SELECT min(id) FROM offers GROUP BY {', '.join(head.LISTING_KEY)}"))
    with closing(sqlite3.connect(store)) as conn:
        ids = [i for (i,) in conn.execute("SELECT id FROM rows ORDER BY rowid")]
        assert ids == lowest and len(ids) < conn.execute("SELECT offers FROM meta").fetchone()[0]
        assert {i for (i,) in conn.execute("SELECT DISTINCT row_id FROM places")} == set(ids)
        conn.execute("CREATE TEMP TABLE j (id INTEGER PRIMARY KEY, cost)")
        plan = " ".join(
            row[3] for row in conn.execute("EXPLAIN QUERY PLAN SELECT * FROM j CROSS JOIN rows r ON r.id = j.id")
        )
        assert "SEARCH r USING INDEX rows_id" in plan, plan


@pytest.mark.parametrize("name", ["shipped", "grouped"])
def test_a_catalog_is_written_with_the_listing_summary_its_store_counts(catalogs, name):
    """build_db records how many listings, offers and which facet values the catalog has: what the store built from
    it holds (its own grouping of the offers into rows, its facets table)."""
    catalog = catalogs[name]
    with closing(sqlite3.connect(catalog)) as cat:
        summary = json.loads(cat.execute("SELECT value FROM meta WHERE key = 'listings'").fetchone()[0])
    with closing(sqlite3.connect(ensure_store(catalog))) as store:
        (rows,) = store.execute("SELECT count(*) FROM rows").fetchone()
        offers, snapshot = store.execute("SELECT offers, snapshot_date FROM meta").fetchone()
        facets = {kind: [] for kind in ("gpus", "providers", "interconnects")}
        for kind, value in store.execute("SELECT kind, value FROM facets ORDER BY kind, value"):
            facets[kind].append(value)
    assert summary == {"count": rows, "offers": offers, "snapshot_date": snapshot, "facets": facets}
    assert rows > 1000 and (offers > rows if name == "grouped" else offers >= rows)


def test_a_new_version_of_a_summarised_catalog_opens_without_counting(catalogs, monkeypatch, tmp_path):
    """A catalog version never seen (no store, no head recorded) serves its first pages from its summary: no
    DISTINCT over the offers, the same page the store gives."""
    catalog = Path(shutil.copy(catalogs["grouped"], tmp_path / "new.sqlite"))
    monkeypatch.setattr(page_module, "build_soon", lambda catalog: None)

    def counted(conn):  # type: ignore[no-untyped-def]
        raise AssertionError("counted")

    monkeypatch.setattr(head, "count_listings", counted)
    monkeypatch.setattr(head, "offers_and_facets", counted)
    served = [compare_page(CompareQuery(**view), catalog) for view in ({}, {"order": "desc", "page": 3})]
    assert not store_path(catalog).exists()
    monkeypatch.undo()
    ensure_store(catalog)
    stored = [compare_page(CompareQuery(**view), catalog) for view in ({}, {"order": "desc", "page": 3})]
    assert [_dumped(page) for page in served] == [_dumped(page) for page in stored]


def test_the_head_is_recorded_once_per_catalog_version(catalogs, monkeypatch, tmp_path):
    """Counted once (a catalog written without a summary), the head (listings, offers, date, facets) is recorded
    beside the store: another worker or a restart reads it instead of counting again; a new catalog version is
    counted anew."""
    catalog = Path(shutil.copy(catalogs["unsummarised"], tmp_path / "again.sqlite"))
    monkeypatch.setattr(page_module, "build_soon", lambda catalog: None)
    first = compare_page(CompareQuery(), catalog)
    head._heads.clear()

    def counted_again(catalog: Path) -> head.Head:
        raise AssertionError("counted again")

    monkeypatch.setattr(head, "_read_head", counted_again)
    assert _dumped(compare_page(CompareQuery(), catalog)) == _dumped(first)
    with pytest.raises(AssertionError, match="counted again"):
        compare_page(CompareQuery(), Path(shutil.copy(catalog, tmp_path / "new-version.sqlite")))


def test_a_first_page_with_the_real_background_build(catalogs, tmp_path):
    """No stand-in: the first page starts the head and the store in a thread and is the store's page once built."""
    catalog = Path(shutil.copy(catalogs["grouped"], tmp_path / "real.sqlite"))
    served = [compare_page(CompareQuery(**view), catalog) for view in ({}, {"order": "desc"})]
    head.warm(catalog).join()
    assert store_path(catalog).exists()
    assert [_dumped(p) for p in served] == [
        _dumped(compare_page(CompareQuery(**view), catalog)) for view in ({}, {"order": "desc"})
    ]


def test_a_file_that_is_not_a_catalog_is_one_error_and_no_thread_traceback(tmp_path, monkeypatch):
    """Reading the head of a file that is not SQLite fails once, in the caller: its counting thread ends without an
    unhandled exception of its own (no second traceback on the server's stderr)."""
    import sqlite3
    import threading

    unhandled: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", unhandled.append)
    foreign = tmp_path / "notes.sqlite"
    foreign.write_text("not a database\n" * 100, "utf-8")
    with pytest.raises(sqlite3.DatabaseError):
        head._read_head(foreign)
    for thread in threading.enumerate():
        if thread.name == "compare-head":
            thread.join(timeout=10)
    assert unhandled == []
