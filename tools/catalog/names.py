"""Names and choices of the offer catalog that the CLI shows in its help, in a module that imports nothing heavy
(tools.catalog.query re-exports them)."""

from __future__ import annotations

from pathlib import Path

SNAPSHOT_FILE = Path(__file__).parents[1] / "data" / "offers-snapshot.jsonl.gz"
"""The offer snapshot shipped with the package (built from the SkyPilot catalog; see tools/data)."""
DB_FILENAME = "catalog.sqlite"

SORTS: dict[str, str] = {
    "price": "price_key",
    "spot_price": "spot_key",
    "price_per_gpu": "ppg_key",
    "spot_price_per_gpu": "sppg_key",
    "vram": "vram_key",
    "gpu_count": "gpu_count, price_key",
}
"""Whitelisted ORDER BY clauses; user input only selects a key, it is never put into SQL."""
