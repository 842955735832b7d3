"""Place words -> catalog regions (tools/catalog/regions.py): expected regions are hand-listed from the providers' own region
pages and checked against the region names in the shared v7 catalog CSVs, read raw here."""

from __future__ import annotations

import csv
import sqlite3
from pathlib import Path

import pytest

from agent.parsing.parse import parse_message
from tests.shared_data import shared_path
from tools.catalog.query import wish_filters
from tools.catalog.regions import expand_region, table

JAPAN = {"ap-northeast-1", "ap-northeast-3", "asia-northeast1", "asia-northeast-1", "tokyo-japan-2"}
"""Japan's regions in the v7 CSVs: AWS Tokyo and Osaka, GCP Tokyo, Lambda Tokyo, Shadeform Tokyo."""
NOT_EU = {
    "eu-west-2",
    "europe-west2",
    "europe-west6",
    "london-uk-1",
    "no - no-kristiansand-1",
    "no",
    "is",
    "oslo-norway-1",
    "reykjanesbaer-iceland-1",
    "simplepod-no",
}
"""In Europe but not in the European Union: London, Zurich, Norway, Iceland."""


def catalog_regions() -> set[str]:
    """Every region name in the shared v7 catalog CSVs, lower-cased, read with the csv module."""
    folder = shared_path("data", "skypilot-catalog-v7")
    names: set[str] = set()
    for path in Path(folder).glob("*.csv"):
        with path.open(newline="", encoding="utf-8") as handle:
            names |= {(row.get("Region") or "").lower() for row in csv.DictReader(handle)} - {""}
    return names


def covered(wish: str) -> set[str]:
    """The catalog's region names a wish covers."""
    found = expand_region(wish)
    return {name for name in catalog_regions() if found.matches(name)}


def test_japan_is_exactly_its_providers_regions() -> None:
    assert covered("japan") == JAPAN
    assert covered("Jepang") == covered("giappone") == JAPAN


def test_europe_covers_every_european_region_and_nothing_else() -> None:
    regions = covered("europe")
    european = {r for r in catalog_regions() if r.startswith(("eu-", "europe-")) or r.endswith(", eu")}
    assert european <= regions
    assert not {r for r in regions if r.startswith(("us-", "asia-", "ap-", "me-", "af-"))}
    assert {"de - fra", "helsinki-finland-1", "europe-ee", "no-kristiansand-1"} <= regions


def test_the_eu_leaves_out_european_countries_outside_it() -> None:
    regions = covered("EU")
    assert {"eu-west-1", "eu-central-1", "europe-west4", "europe-west9", "eu-north1", "it-fr2"} <= regions
    assert not regions & NOT_EU


def test_asia_and_cities_and_prefixes() -> None:
    asia = covered("asia")
    assert {"ap-northeast-1", "ap-southeast-1", "asia-south1", "singapore-singapore-1", "taiwan, tw, as"} <= asia
    assert "ap-southeast-2" not in asia  # Sydney is in Oceania
    assert (
        covered("singapura") == covered("singapore") == {"ap-southeast-1", "asia-southeast1", "singapore-singapore-1"}
    )
    assert covered("tokyo") == JAPAN - {"ap-northeast-3"}
    assert {"us-east-1", "us-east-2", "us-east1", "us-east4"} <= covered("us-east")
    assert not {r for r in covered("us-east") if not r.startswith("us-east")}


def test_an_unknown_wish_matches_only_itself() -> None:
    assert covered("eu-west-1") == {"eu-west-1"}
    assert covered("mars") == set()


def test_the_table_names_its_source() -> None:
    assert "skypilot-catalog-v7" in table()["source"] and "offers-snapshot" in table()["source"]


@pytest.mark.parametrize(
    ("wish", "inside", "outside"),
    [
        ("europe", ["eu-west-1", "europe-west4"], ["us-east-1"]),
        ("eu", ["eu-west-1"], ["eu-west-2"]),
        ("singapore", ["ap-southeast-1"], ["ap-southeast-2"]),
    ],
)
def test_catalog_wish_filter_matches_in_sql(wish: str, inside: list[str], outside: list[str]) -> None:
    where, params = wish_filters(None, None, (wish,))
    with sqlite3.connect(":memory:") as conn:
        conn.execute("CREATE TABLE offers (region_lc TEXT, zone_lc TEXT)")
        conn.executemany("INSERT INTO offers VALUES (?, NULL)", [(r,) for r in inside + outside])
        got = {row[0] for row in conn.execute(f"SELECT region_lc FROM offers WHERE {' AND '.join(where)}", params)}
    assert got == set(inside)


@pytest.mark.parametrize(
    ("text", "regions"),
    [
        ("LoRA su Llama 3 8B, server di Singapura atau Jepang", ["singapore", "japan"]),
        ("QLoRA in the EU, budget $200", ["eu"]),
        ("fine-tuning in Europa o in Asia", ["europe", "asia"]),
        ("lora di Eropa saja", ["europe"]),
        ("qlora on AWS in eu-west-1", ["eu-west-1"]),
    ],
)
def test_the_parser_keeps_the_users_place_word(text: str, regions: list[str]) -> None:
    assert parse_message(text, use_llm=False).spec.regions == regions
