"""Where the catalog lives ($GPU_ADVISOR_DB, else $GPU_ADVISOR_HOME/catalog.sqlite, else the user data dir), and the
names and choices of the catalog that the CLI shows in its help: a module that imports nothing heavy
(tools.catalog.query re-exports them)."""

from __future__ import annotations

import os
import sys
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


def _user_data_dir() -> Path:
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "gpu-advisor"


def default_db_path() -> Path:
    """``$GPU_ADVISOR_DB`` if set, else ``$GPU_ADVISOR_HOME/catalog.sqlite``, else the user data dir
    (``~/.local/share/gpu-advisor/catalog.sqlite`` on Linux, honouring ``$XDG_DATA_HOME``)."""
    explicit = os.environ.get("GPU_ADVISOR_DB")
    if explicit:
        return Path(explicit).expanduser()
    home = os.environ.get("GPU_ADVISOR_HOME")
    if home:
        return Path(home).expanduser() / DB_FILENAME
    return _user_data_dir() / DB_FILENAME


def resolve_db_path(db_path: Path | str | None) -> tuple[Path, bool]:
    """(path, explicit): explicit when given by the caller or $GPU_ADVISOR_DB (its folder is never created)."""
    if db_path:
        return Path(db_path).expanduser(), True
    return default_db_path(), bool(os.environ.get("GPU_ADVISOR_DB"))


# ---------------------------------------------------------------------------------------------------------- snapshot
