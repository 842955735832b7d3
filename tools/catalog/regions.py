"""Place words -> catalog regions: continents, the EU, countries and cities ('europe', 'eu', 'asia', 'japan',
'tokyo', 'singapura') expand into the region names and patterns they cover (tools/data/regions.json, with its source),
so that a job can keep the user's word and still match 'eu-west-1', 'europe-west4' or 'EU-SE-1'."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

REGIONS_PATH = Path(__file__).parents[1] / "data" / "regions.json"
_REGION_CODE = re.compile(r"[a-z]{2,}(?:[- ][a-z0-9]+)*")
"""A wish that looks like (the start of) a region name ('us-east', 'europe-west4') also matches as a prefix."""


@dataclass(frozen=True, kw_only=True)
class RegionSet:
    """What one place word covers: exact region/zone names and SQL LIKE patterns (lower case)."""

    names: frozenset[str]
    patterns: frozenset[str]

    def matches(self, region: str | None) -> bool:
        """Whether a catalog region or zone name falls in this set."""
        if not region:
            return False
        low = region.strip().lower()
        return low in self.names or any(_like(pattern, low) for pattern in self.patterns)


@cache
def table() -> dict[str, Any]:
    """The place table (tools/data/regions.json)."""
    data: dict[str, Any] = json.loads(REGIONS_PATH.read_text(encoding="utf-8"))
    return data


def _like(pattern: str, text: str) -> bool:
    """SQL LIKE ('%' any run, '_' one character) on lower-case text, as SQLite reads it."""
    rx = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    return re.fullmatch(rx, text, re.DOTALL) is not None


@cache
def place_names() -> dict[str, str]:
    """Every place word (it/id/en names of areas, countries and cities) -> its key in the table."""
    out: dict[str, str] = {}
    for kind in ("areas", "countries", "cities"):
        for key, entry in table()[kind].items():
            for name in (key, *entry["names"]):
                out.setdefault(name.lower(), key)
    return out


def _country(key: str) -> RegionSet:
    """A country: its providers' named regions plus the country naming conventions."""
    entry = table()["countries"][key]
    code, word = entry["code"], entry["word"]
    patterns = {
        p.format(cc=code, word=word)
        for p in table()["country_patterns"]
        if not (p == "{cc}-%" and code in table()["prefix_clash"])
    }
    names = {p for p in patterns if "%" not in p and "_" not in p}
    return RegionSet(
        names=frozenset(names | {r.lower() for r in entry["regions"]}), patterns=frozenset(patterns - names)
    )


def _by_code(code: str) -> RegionSet:
    """A country by its ISO code; members of an area that the table has no entry for match by convention only."""
    for key, entry in table()["countries"].items():
        if entry["code"] == code:
            return _country(key)
    patterns = {
        p.format(cc=code, word=code)
        for p in table()["country_patterns"]
        if "{word}" not in p and not (p == "{cc}-%" and code in table()["prefix_clash"])
    }
    names = {p for p in patterns if "%" not in p}
    return RegionSet(names=frozenset(names), patterns=frozenset(patterns - names))


def _union(sets: list[RegionSet]) -> RegionSet:
    """All the regions of several sets."""
    return RegionSet(
        names=frozenset().union(*(s.names for s in sets)), patterns=frozenset().union(*(s.patterns for s in sets))
    )


@lru_cache(maxsize=1024)  # keyed by the region text users type: bounded
def expand_region(wish: str) -> RegionSet:
    """The catalog regions a wish covers: an area, country or city of the table ('europe', 'EU', 'Jepang', 'Tokyo'),
    else the wish itself as a region or zone name, and as a prefix when it looks like one ('us-east')."""
    low = re.sub(r"\s+", " ", wish.strip().lower())
    key = place_names().get(low)
    if key in table()["areas"]:
        entry = table()["areas"][key]
        return _union(
            [
                RegionSet(names=frozenset(), patterns=frozenset(entry["patterns"])),
                *(_by_code(code) for code in entry["countries"]),
            ]
        )
    if key is not None and key in table()["countries"]:
        return _country(key)
    if key in table()["cities"]:
        entry = table()["cities"][key]
        return RegionSet(names=frozenset(r.lower() for r in entry["regions"]), patterns=frozenset(entry["patterns"]))
    prefix = frozenset({low + "%"}) if _REGION_CODE.fullmatch(low) and "-" in low else frozenset()
    return RegionSet(names=frozenset({low}), patterns=prefix)


def region_sql(wishes: tuple[str, ...] | list[str]) -> tuple[str, list[str]]:
    """One WHERE clause (and its parameters) matching offers whose region or zone any of the wishes covers."""
    found = _union([expand_region(w) for w in wishes if w and w.strip()])
    names, patterns = sorted(found.names), sorted(found.patterns)
    parts: list[str] = []
    params: list[str] = []
    if names:
        marks = ", ".join("?" for _ in names)
        parts.append(f"region_lc IN ({marks}) OR zone_lc IN ({marks})")
        params.extend([*names, *names])
    for pattern in patterns:
        parts.append("region_lc LIKE ? OR zone_lc LIKE ?")
        params.extend([pattern, pattern])
    return "(" + " OR ".join(parts or ["0"]) + ")", params
