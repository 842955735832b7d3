"""A turn's ranking costs SQL-chosen candidates, so a 10x larger catalog changes the counts, not the advice or the
work: real SQLite catalogs in tmp_path (the shipped snapshot, and 50k offers made from it with new regions and
dearer prices)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import tools.catalog.candidates as candidates
from contract.jobspec import Budget, JobSpec
from tests.priced_copies import priced_row
from tools.catalog.query import build_db, build_from_snapshot, offer_row, read_snapshot
from tools.ranking.rank import clear_cache, rank_offers

SPECS = [
    JobSpec(
        language="en",
        model="llama-3.1-8b",
        method="qlora",
        dataset_tokens=20_000_000,
        epochs=2,
        budget=Budget(amount=50, currency="EUR"),
        deadline_hours=24,
    ),
    JobSpec(language="it", model="llama-3.1-8b", method="full_finetune", interruptible_ok=True),
    JobSpec(language="id", params_b=70, method="lora", gpu="H100"),
]


@pytest.fixture(scope="module")
def catalogs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The snapshot, and 50k offers: each snapshot row plus copies in new regions at 1-30 % higher prices."""
    folder = tmp_path_factory.mktemp("scale")
    small = build_from_snapshot(folder / "snapshot.sqlite")
    _, offers = read_snapshot()
    base = [offer_row(o) for o in offers]
    rng = random.Random(14)

    def rows(count: int):
        for index in range(count):
            copy, position = divmod(index, len(base))
            yield priced_row(base[position], copy, rng.uniform(1.01, 1.3) if copy else 1.0)

    large = build_db(
        folder / "large.sqlite", rows(50_000), {"source": "test", "built_from": "synthetic"}, trusted_rows=True
    )
    return {"small": small, "large": large}


@pytest.fixture()
def offers_built(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the Offer objects the candidate query builds (one entry per build)."""
    built: list[int] = []
    original = candidates.offer_from_row

    def counting(row):
        built.append(1)
        return original(row)

    monkeypatch.setattr(candidates, "offer_from_row", counting)
    clear_cache()
    return built


@pytest.mark.parametrize("spec", SPECS, ids=["qlora-8b-budget-deadline", "full-8b-spot", "lora-70b-h100"])
def test_larger_catalog_gives_the_same_advice_and_counts_every_offer(catalogs: dict[str, Path], spec: JobSpec) -> None:
    """Dearer copies in new regions change nothing a user is told first: same headline, same price, same job
    estimate; every row is still counted (considered = catalog size for a job without wishes)."""
    clear_cache()
    small = rank_offers(spec, db_path=catalogs["small"])
    large = rank_offers(spec, db_path=catalogs["large"])
    assert small.offers and large.offers
    first_small, first_large = small.offers[0], large.offers[0]
    assert (first_large.provider, first_large.instance_type, first_large.region, first_large.spot) == (
        first_small.provider,
        first_small.instance_type,
        first_small.region,
        first_small.spot,
    )
    assert first_large.est_cost == pytest.approx(first_small.est_cost)
    assert large.considered > small.considered
    if spec.gpu is None:
        assert large.considered == 50_000
    assert sum(large.excluded.values()) <= large.considered


def test_ranking_builds_offers_only_for_candidates(catalogs: dict[str, Path], offers_built: list[int]) -> None:
    """Ten times the offers, the same number of Offer objects: about two per instance shape, never per row."""
    rank_offers(SPECS[1], db_path=catalogs["small"])
    small = len(offers_built)
    offers_built.clear()
    rank_offers(SPECS[1], db_path=catalogs["large"])
    assert len(offers_built) <= small * 1.2
    assert len(offers_built) < 2_500, "about two Offer objects per instance shape, not one per row"


def test_warm_turns_reuse_the_candidates(catalogs: dict[str, Path], offers_built: list[int]) -> None:
    """A second job with the same wishes builds no Offer at all (candidates cached per catalog file version)."""
    rank_offers(SPECS[0], db_path=catalogs["large"])
    offers_built.clear()
    rank_offers(SPECS[1], db_path=catalogs["large"])
    assert offers_built == []


def test_small_and_large_catalog_paths_choose_the_same_candidates(
    catalogs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows grouped in memory (small catalogs) and index seeks per key (large ones) give the same candidates,
    counts, regions and zones, with and without wishes."""
    for wishes in ({}, {"gpu": "H100"}, {"regions": ("us-east-1",)}, {"providers": ("aws", "vast")}):
        in_memory = candidates.candidate_rows(catalogs["small"], **wishes)
        monkeypatch.setattr(candidates, "IN_MEMORY_ROWS", 0)
        indexed = candidates.candidate_rows(catalogs["small"], **wishes)
        monkeypatch.undo()

        def key(item):
            offer, count, regions, zones = item
            return (
                offer.provider,
                offer.instance_type,
                offer.region,
                offer.zone,
                offer.price_per_hour,
                offer.spot_price_per_hour,
                count,
                regions,
                zones,
            )

        assert sorted(map(key, in_memory), key=repr) == sorted(map(key, indexed), key=repr), wishes
        assert sum(count for _, count, _, _ in in_memory) > 0


def test_compare_table_still_costs_every_price_group(catalogs: dict[str, Path]) -> None:
    """every_offer (the compare table's limit > 1000) lists the same instance in several regions at different
    prices; the chat's ranking lists each instance's cheapest price."""
    clear_cache()
    spec = SPECS[1]
    chat = rank_offers(spec, db_path=catalogs["small"], limit=1000)
    table = rank_offers(spec, db_path=catalogs["small"], limit=100_000)
    assert table.total_eligible > chat.total_eligible
    assert table.considered == chat.considered
    assert table.offers[0].est_cost == pytest.approx(chat.offers[0].est_cost)
