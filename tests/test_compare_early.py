"""A new job's first pages on a large store, priced in memory while its table is built (web.compare.early): the same
rows, order, counts and chart as the table's, for every job sort both ways, first, middle and last pages; the table
then built in the background; and pages read while another job's table is being written. Real SQLite catalogs."""

from __future__ import annotations

import json
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.priced_copies import copied_catalog, seeded_factors
from web.compare import compare_page, costs, early
from web.compare import page as page_module
from web.compare.data import CompareQuery
from web.compare.job import parse_job
from web.compare.store import PRICE_ARRAYS, connect, ensure_store, write_price_arrays

JOBS = [
    "QLoRA su Llama 3 8B, budget 50 euro",
    "full fine-tune llama 3 70B, spot ok",
    "LoRA Mistral 7B, no spot, 4 GPUs",
    "LoRA Mistral 7B on H100 in europe",
    "QLoRA Qwen2.5 14B dengan 20 ribu contoh, boleh spot, hanya di aws atau runpod",
]


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped snapshot's rows in three more regions each, at seeded price factors (0.7-1.3)."""
    folder = tmp_path_factory.mktemp("compare-early")
    return copied_catalog(folder / "large.sqlite", seeded_factors(3, 31))


def _name(job: str) -> str:
    """The job's table name."""
    spec, _ = parse_job(job, None)
    return costs.table_name(spec.model_copy(update={"budget": None, "deadline_hours": None}))


def _views(total: int) -> list[dict]:
    """Every job sort both ways: the first, second, a middle (sorted whole) and the last page."""
    pages = max(1, -(-total // 50))
    return [
        {"sort": sort, "order": order, "page": page}
        for sort in (None, "hours", "per_gpu_gib")
        for order in ("asc", "desc")
        for page in sorted({1, 2, max(1, pages // 2), pages})
    ]


@pytest.mark.parametrize("job", JOBS)
def test_early_pages_are_the_tables_pages(catalog, job, monkeypatch):
    monkeypatch.setattr(early, "EARLY_FROM", 0)
    later: list[str] = []
    monkeypatch.setattr(page_module, "build_later", lambda store, spec, name, plans: later.append(name))
    early._jobs.clear()
    store = ensure_store(catalog)
    name = _name(job)
    first = compare_page(CompareQuery(job=job), catalog)
    assert later == [name]  # served before the table exists
    with closing(connect(store)) as conn:
        assert costs.built_table(conn, name) is None
    assert first["total"] > 100
    views = _views(first["total"])
    served = [compare_page(CompareQuery(job=job, **view), catalog) for view in views]
    with closing(connect(store)) as conn:
        assert costs.built_table(conn, name) is None
    spec, _ = parse_job(job, None)
    costs.ensure_job(store, catalog, spec.model_copy(update={"budget": None, "deadline_hours": None}))
    for view, early_page in zip(views, served, strict=True):
        table_page = compare_page(CompareQuery(job=job, **view), catalog)
        assert early_page["rows"], view
        assert json.dumps(early_page, sort_keys=True) == json.dumps(table_page, sort_keys=True), view
    assert json.dumps(first, sort_keys=True) == json.dumps(compare_page(CompareQuery(job=job), catalog), sort_keys=True)


def test_the_table_is_built_in_the_background_then_serves_every_view(catalog, monkeypatch):
    monkeypatch.setattr(early, "EARLY_FROM", 0)
    early._jobs.clear()
    job = "LoRA Llama 3.1 8B on 30k examples, spot ok"
    store = ensure_store(catalog)
    first = compare_page(CompareQuery(job=job), catalog)
    costs.wait_for_builds()
    with closing(connect(store)) as conn:
        table = costs.built_table(conn, _name(job))
    assert table is not None and table.runs_on == first["job"]["runs_on"] == first["total"]
    gpu = first["rows"][0]["gpu"]
    filtered = compare_page(CompareQuery(job=job, gpu=gpu, sort="price"), catalog)  # not a view opened early
    assert filtered["rows"] and all(r["gpu"] == gpu and r["job"]["fits"] for r in filtered["rows"])


def test_pages_are_read_while_a_job_table_is_being_written(catalog):
    """The store is in WAL mode and marking a table used never waits: a writer holding the store does not stall
    the listings or another job's pages."""
    store = ensure_store(catalog)
    compare_page(CompareQuery(job=JOBS[2], gpu="L4"), catalog)  # its table built
    done: list[dict] = []
    with closing(connect(store)) as writer:
        writer.execute("BEGIN EXCLUSIVE")
        writer.execute("CREATE TABLE job_being_written (id INTEGER PRIMARY KEY)")

        def read() -> None:
            done.append(compare_page(CompareQuery(page=3), catalog))
            done.append(compare_page(CompareQuery(job=JOBS[2], gpu="L4", page=1), catalog))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(timeout=10)
        writer.execute("ROLLBACK")
    assert len(done) == 2 and done[0]["rows"] and done[1]["rows"]


_PRICE = st.one_of(st.none(), st.just(0.0), st.floats(0.01, 90.0))
_PLAN = st.tuples(
    st.integers(1, 3),  # nodes
    st.floats(0.01, 500.0),  # od_billed
    st.floats(0.01, 500.0),  # od_hours
    st.floats(1.0, 80.0),  # per_gpu
    st.sampled_from(["fsdp", "ddp", "zero3"]),
    st.sampled_from([0, 1]),  # spot_model
    st.sampled_from([0, 1]),  # spot_decides
    st.floats(1.0, 2e6),  # spot_billed_s
    st.floats(1.0, 2e6),  # spot_od_billed_s
    st.floats(0.01, 600.0),  # spot_hours
)


@settings(max_examples=150, deadline=None)
@given(
    plans=st.lists(st.one_of(st.none(), _PLAN), min_size=1, max_size=5),
    listings=st.lists(st.tuples(st.integers(0, 4), st.booleans(), _PRICE, _PRICE), min_size=1, max_size=40),
    interruptible_ok=st.sampled_from([None, True, False]),
)
def test_listings_are_priced_in_memory_as_sql_prices_them(plans, listings, interruptible_ok):
    """Any listings (market prices, zero and missing prices) and plans (spot model or not, spot decisive or not):
    early.price_job gives the job table's rows, figures and spot choices, bit for bit."""
    with closing(sqlite3.connect(":memory:", isolation_level=None)) as conn:
        conn.execute(
            "CREATE TABLE rows (id INTEGER PRIMARY KEY, shape_id, on_demand_is_market, price_per_hour, "
            "spot_price_per_hour)"
        )
        conn.executemany(
            "INSERT INTO rows VALUES (?, ?, ?, ?, ?)",
            [(n + 1, min(shape, len(plans) - 1), *rest) for n, (shape, *rest) in enumerate(listings)],
        )
        rows = [  # without a spot model, its figures are NULL, as the plans have them
            (shape, *plan[:5], 1, *plan[6:]) if plan[5] else (shape, *plan[:5], 0, None, None, None, None)
            for shape, plan in enumerate(plans)
            if plan is not None
        ]
        conn.execute(f"CREATE TEMP TABLE plan (shape_id INTEGER PRIMARY KEY, {', '.join(costs.PLAN_COLUMNS[1:])})")
        conn.executemany(f"INSERT INTO plan VALUES ({', '.join('?' for _ in costs.PLAN_COLUMNS)})", rows)
        expected = conn.execute(f"SELECT * FROM ({costs.priced_sql([], interruptible_ok)}) ORDER BY id").fetchall()
        write_price_arrays(conn)
        blobs = dict(conn.execute("SELECT name, data FROM price_arrays"))
    found = early.Listings(**{name: np.frombuffer(blobs[name], dtype=kind) for name, kind in PRICE_ARRAYS.items()})
    job = early.price_job(found, costs.JobPlans(rows=rows, excluded={}), None, interruptible_ok)
    got = [
        (
            int(job.ids[position]),
            bool(spot),
            float(cost),
            float(hours),
            float(per_gpu),
            int(nodes),
            job.plans.layouts[shape],
        )
        for position, spot, cost, hours, per_gpu, nodes, shape in zip(
            job.positions,
            job.spot,
            job.cost,
            job.values("hours"),
            job.values("per_gpu"),
            job.values("nodes"),
            job.shapes,
            strict=True,
        )
    ]
    assert got == [(i, bool(spot), *rest) for i, spot, *rest in expected]


def test_a_new_jobs_first_page_does_not_wait_for_another_jobs_table(catalog, monkeypatch):
    """Two new jobs in a row on a large store: while the first job's table is written in the background, the second
    job's first page is served (priced in memory), not held until that write ends."""
    monkeypatch.setattr(early, "EARLY_FROM", 0)
    early._jobs.clear()
    first_job, second_job = "LoRA Qwen2.5 7B, sequence length 3001", "QLoRA Llama 3 8B, sequence length 2999"
    writing, release = threading.Event(), threading.Event()
    write = costs._write_job

    def slow_write(conn, spec, name, plans):  # the first job's table takes as long as the test says
        if name == _name(first_job):
            writing.set()
            release.wait(30)
        return write(conn, spec, name, plans)

    monkeypatch.setattr(costs, "_write_job", slow_write)
    ensure_store(catalog)
    try:
        compare_page(CompareQuery(job=first_job), catalog)
        assert writing.wait(10), "the first job's table is being written"
        served: list[dict] = []
        second = threading.Thread(target=lambda: served.append(compare_page(CompareQuery(job=second_job), catalog)))
        second.start()
        second.join(timeout=10)
        assert served and served[0]["rows"], "the second job's first page waited for the first job's table"
    finally:
        release.set()
        costs.wait_for_builds()
