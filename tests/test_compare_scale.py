"""The comparison table at catalog scale: every listing reachable through the pages, the job's figures equal to the
ranking's on the shipped catalog, and the same figures for copies of an offer at other prices (cost proportional to
the price: independent arithmetic). Real SQLite catalogs in tmp_path; the page is served in-process."""

from __future__ import annotations

from pathlib import Path

import pytest

from contract.jobspec import JobSpec
from tests.priced_copies import copied_catalog, seeded_factors
from tools.catalog import build_from_snapshot
from tools.ranking import rank_offers
from web.compare import compare_page
from web.compare.data import CompareQuery

COPIES = 6
JOBS = [
    "QLoRA su Llama 3 8B, budget 50 euro",
    "full fine-tune llama 3 70B, spot ok",
    "LoRA Mistral 7B, no spot, 4 GPUs",
]


@pytest.fixture(scope="module")
def catalogs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The shipped snapshot, and each of its rows in COPIES more regions at seeded price factors (0.7-1.3)."""
    folder = tmp_path_factory.mktemp("compare-scale")
    small = build_from_snapshot(folder / "snapshot.sqlite")
    factors = seeded_factors(COPIES, 28)
    large = copied_catalog(folder / "large.sqlite", factors)
    return {"small": small, "large": large, "factors": factors}  # type: ignore[dict-item]


def every_row(db: Path, **params) -> list[dict]:
    """All rows of a view, page after page."""
    first = compare_page(CompareQuery(page_size=200, **params), db)
    rows = list(first["rows"])
    for page in range(2, first["pages"] + 1):
        rows += compare_page(CompareQuery(page_size=200, page=page, **params), db)["rows"]
    assert len(rows) == first["total"]
    return rows


def test_every_listing_is_reachable_and_listed_once(catalogs):
    small, large = every_row(catalogs["small"]), every_row(catalogs["large"])
    offers = compare_page(CompareQuery(), catalogs["large"])["offers"]
    assert offers == (COPIES + 1) * compare_page(CompareQuery(), catalogs["small"])["offers"]
    keys = [
        (
            r["provider"],
            r["instance_type"],
            r["price_per_hour"],
            r["spot_price_per_hour"],
            r["vram_gib_per_gpu"],
            r["interconnect"],
        )
        for r in large
    ]
    assert len(set(keys)) == len(keys)
    assert len(large) == (COPIES + 1) * len(small)  # each copy's prices differ: its own listing
    assert sum(len(r["regions"]) or 1 for r in large) >= len(large)
    prices = [r["price_per_hour"] for r in large if r["price_per_hour"] is not None]
    assert prices == sorted(prices)


@pytest.mark.parametrize("text", JOBS)
def test_job_figures_equal_the_rankings_for_every_listing_it_lists(catalogs, text):
    """The SQL pricing gives rank_offers' own cost, hours, spot choice and nodes (the ranking lists the cheapest
    price per instance and region; the table lists every price)."""
    from web.compare.job import parse_job

    rows = every_row(catalogs["small"], job=text)
    spec, _ = parse_job(text, None)
    ranking = rank_offers(
        spec.model_copy(update={"budget": None, "deadline_hours": None}), db_path=catalogs["small"], limit=100_000
    )
    reference = {}
    for item in ranking.offers:
        for region in item.regions or [item.region]:
            reference.setdefault(
                (item.provider, item.instance_type, region, item.on_demand_price_per_hour, item.spot_price_per_hour),
                item,
            )
    compared = 0
    for row in rows:
        for region in row["regions"]:
            item = reference.get(
                (row["provider"], row["instance_type"], region, row["price_per_hour"], row["spot_price_per_hour"])
            )
            if item is not None:
                job = row["job"]
                assert (job["est_cost"], job["est_hours"], job["spot"], job["nodes"]) == (
                    item.est_cost,
                    item.est_hours,
                    item.spot,
                    item.nodes,
                ), row
                compared += 1
    assert compared > 0.8 * len(rows)
    costs = [r["job"]["est_cost"] for r in rows]
    assert costs == sorted(costs)


def test_copies_at_other_prices_cost_in_proportion_and_all_are_listed(catalogs):
    """On demand only, a job's cost is billed hours x price: a copy at factor f costs f times its original."""
    spec = JobSpec(language="en", model="llama-3.1-8b", method="lora", interruptible_ok=False)
    text = spec.model_dump_json(exclude_none=True)
    small = every_row(catalogs["small"], job=text)
    large = every_row(catalogs["large"], job=text)
    assert len(large) == (COPIES + 1) * len(small) > 100  # no cap: every listing the job runs on
    original: dict[tuple, list[dict]] = {}
    for r in small:
        original.setdefault((r["provider"], r["instance_type"], tuple(r["regions"])), []).append(r)
    checked = 0
    for row in large:
        regions = tuple(region.rsplit("-copy", 1)[0] for region in row["regions"])
        if not row["regions"] or "-copy" not in row["regions"][0] or row["price_per_hour"] is None:
            continue
        factor = catalogs["factors"][int(row["regions"][0].rsplit("-copy", 1)[1])]
        bases = [
            b
            for b in original.get((row["provider"], row["instance_type"], regions), [])
            if b["price_per_hour"]
            and abs(b["price_per_hour"] * factor - row["price_per_hour"]) < 1e-9
            and b["vram_gib_per_gpu"] == row["vram_gib_per_gpu"]
        ]
        if len(bases) != 1:
            continue
        base = bases[0]
        assert row["job"]["est_cost"] == pytest.approx(base["job"]["est_cost"] * factor, rel=1e-6)
        assert row["job"]["est_hours"] == pytest.approx(base["job"]["est_hours"])
        checked += 1
    assert checked > 100


def test_filters_and_sorts_on_the_large_catalog(catalogs):
    db = catalogs["large"]
    h100 = every_row(db, gpu="H100", spot=True)
    assert h100 and all(r["gpu"] == "H100" and r["spot_price_per_hour"] is not None for r in h100)
    copy3 = every_row(db, region="-copy3")
    assert copy3 and all(any("-copy3" in p for p in r["regions"] + r["zones"]) for r in copy3)
    for order in ("asc", "desc"):
        spot = every_row(db, sort="spot_price", order=order)
        values = [r["spot_price_per_hour"] for r in spot]
        present = [v for v in values if v is not None]
        assert present == sorted(present, reverse=order == "desc")
        assert values[len(present) :] == [None] * (len(values) - len(present))  # missing last both ways


def test_small_views_kept_as_id_lists_page_like_the_index_walk(catalogs, monkeypatch):
    """A filtered view ordered once and sliced gives the same pages as SQLite walking the sort index."""
    import web.compare.data as data

    db = catalogs["large"]
    views = [
        {"gpu": "H100"},
        {"q": "a100", "sort": "spot_price", "order": "desc"},
        {"region": "-copy2", "sort": "vram"},
        {"job": JOBS[0], "provider": "aws"},
        {"job": JOBS[0], "gpu": "L40S", "sort": "hours", "order": "desc"},
        {"job": JOBS[0], "q": "runpod", "fits_only": False},
    ]
    for view in views:
        kept = [every_row(db, **view)]
        monkeypatch.setattr(data, "SMALL_VIEW", 0)
        data._COUNTS.clear()
        kept.append(every_row(db, **view))
        monkeypatch.undo()
        data._COUNTS.clear()
        data._IDS.clear()
        assert kept[0] == kept[1], view
        assert kept[0], view


@pytest.mark.parametrize(("sort", "field"), [("hours", "est_hours"), ("per_gpu_gib", "per_gpu_gib")])
def test_job_sorts_walk_an_index_made_on_first_use(catalogs, sort, field):
    """Sorting a job by hours or memory lists the job cost's rows in that order both ways (ties by listing), its
    index created by that first sort, not with the table."""
    from contextlib import closing

    from web.compare.costs import table_name
    from web.compare.job import parse_job
    from web.compare.store import connect, ensure_store

    db = catalogs["large"]
    spec, _ = parse_job(JOBS[1], None)
    name = table_name(spec.model_copy(update={"budget": None, "deadline_hours": None}))
    column = {"hours": "hours", "per_gpu_gib": "per_gpu"}[sort]
    by_cost = every_row(db, job=JOBS[1])
    store = ensure_store(db)
    with closing(connect(store)) as conn:
        indexes = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE tbl_name = ?", (name,))}
    assert f"{name}_cost" in indexes and f"{name}_{column}" not in indexes
    for order in ("asc", "desc"):
        rows = every_row(db, job=JOBS[1], sort=sort, order=order)
        assert sorted(map(repr, rows)) == sorted(map(repr, by_cost))
        values = [r["job"][field] for r in rows]
        assert values == sorted(values, reverse=order == "desc")
    with closing(connect(store)) as conn:
        assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (f"{name}_{column}",)).fetchone()
