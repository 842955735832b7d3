"""Large synthetic catalogs for the comparison tests: the shipped snapshot's rows copied into new regions at other
prices (copy k's region and zone end in "-copyk"; its prices are the original's times factor k)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tools.catalog import build_db, offer_row, read_snapshot

PRICE_COLUMNS = ("price_per_hour", "spot_price_per_hour", "price_key", "spot_key", "ppg_key", "sppg_key")
"""Row columns that scale with the price (a key of 1e17 or more stands for a missing price and stays)."""


def seeded_factors(copies: int, seed: int) -> list[float]:
    """1.0 for the original, then one seeded factor in 0.7-1.3 per copy."""
    rng = random.Random(seed)
    return [1.0] + [round(rng.uniform(0.7, 1.3), 4) for _ in range(copies)]


def priced_row(original: dict[str, Any], copy: int, factor: float) -> dict[str, Any]:
    """Copy number `copy` of a catalog row: in regions and zones ending in "-copy<copy>", at `factor` times its
    prices (copy 0 is the row itself)."""
    row = dict(original)
    if copy:
        for key in PRICE_COLUMNS:
            if row[key] is not None and row[key] < 1e17:
                row[key] = row[key] * factor
        for key in ("region", "zone"):
            if row[key]:
                row[key] = f"{row[key]}-copy{copy}"
                row[f"{key}_lc"] = row[key].lower()
    return row


def priced_copies(base: list[dict[str, Any]], factors: list[float]) -> Iterator[dict[str, Any]]:
    """Each row once per factor; every copy after the first in its own regions and zones, at its factor's prices."""
    for copy, factor in enumerate(factors):
        for original in base:
            yield priced_row(original, copy, factor)


def copied_catalog(path: Path, factors: list[float]) -> Path:
    """A catalog of the shipped snapshot's rows copied at `factors` (built with trusted rows)."""
    _, offers = read_snapshot()
    base = [offer_row(o) for o in offers]
    return build_db(
        path, priced_copies(base, factors), {"source": "test", "built_from": "synthetic"}, trusted_rows=True
    )
