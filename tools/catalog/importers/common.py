"""Reading SkyPilot v7 ``vms.csv`` files safely: records by header name, numbers and prices, ``GpuInfo`` literals
(never evaluated), the result and issue types, folder discovery and de-duplication."""

from __future__ import annotations

import ast
import csv
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tools.catalog.offer import Offer

SPOT_SENTINEL = 99_999_999.0
"""primeintellect's placeholder for "no spot price"."""

MAX_GPUINFO_CHARS = 4000
"""A GpuInfo longer than this is rejected before parsing (real ones are < 300 characters)."""

REQUIRED_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")


@dataclass(frozen=True)
class ImportIssue:
    """One problem found in an input file; the row (or file) it names was skipped."""

    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.message}"


@dataclass
class ImportResult:
    """Offers read from one file or folder, with the problems found and remarks."""

    offers: list[Offer] = field(default_factory=list)
    issues: list[ImportIssue] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    """Offers per cloud."""
    notes: list[str] = field(default_factory=list)
    """Non-error remarks, e.g. rows that cannot become offers by design (gcp n1 accelerators)."""
    source: str = ""
    snapshot_date: str = ""


class RowError(ValueError):
    """A value in a row is unusable; the row is skipped and reported."""


def number(value: str | None, column: str) -> float | None:
    """A finite, non-negative number, or None for an empty cell; RowError otherwise."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        result = float(text)
    except ValueError as error:
        raise RowError(f"{column} is not a number: {text[:40]!r}") from error
    if not math.isfinite(result):
        raise RowError(f"{column} is not finite: {text[:40]!r}")
    if result < 0:
        raise RowError(f"{column} is negative: {text[:40]!r}")
    return result


def price(value: str | None, column: str) -> float | None:
    """USD/hour, or None for 'not offered' (empty, 0, or the 99999999 placeholder)."""
    result = number(value, column)
    if result is None or result == 0 or result >= SPOT_SENTINEL:
        return None
    return result


def count(value: str | None) -> int:
    """AcceleratorCount as a whole number >= 1; RowError otherwise."""
    result = number(value, "AcceleratorCount")
    if result is None or result < 1 or abs(result - round(result)) > 1e-6:
        raise RowError(f"AcceleratorCount is not a whole number >= 1: {value!r}")
    return round(result)


_PLAIN_NAME = re.compile(r"^[A-Za-z0-9 _.\-]{1,80}$")


def parse_gpu_info(text: str | None) -> dict[str, Any] | str | None:
    """GpuInfo as a dict (Python literal or JSON), a plain GPU name (runpod), or None when empty.

    Never evaluates code: only ``json.loads`` and ``ast.literal_eval`` (which accepts literals only) are used, and
    anything else raises ``RowError``."""
    if text is None:
        return None
    value = text.strip()
    if not value:
        return None
    if len(value) > MAX_GPUINFO_CHARS:
        raise RowError(f"GpuInfo is {len(value)} characters long, over {MAX_GPUINFO_CHARS}")
    if value.startswith("{"):
        try:
            parsed: Any = json.loads(value)
        except ValueError:
            try:
                parsed = ast.literal_eval(value)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as error:
                raise RowError(f"GpuInfo is not a Python/JSON literal: {value[:60]!r}") from error
        if not isinstance(parsed, dict):
            raise RowError(f"GpuInfo is not a dict: {value[:60]!r}")
        return parsed
    if _PLAIN_NAME.match(value):
        return value
    raise RowError(f"GpuInfo is neither a literal nor a GPU name: {value[:60]!r}")


def gpu_info_fields(info: dict[str, Any] | str | None) -> tuple[str | None, float | None]:
    """(GPU name, SizeInMiB of Gpus[0]) from a parsed GpuInfo."""
    if isinstance(info, str):
        return info, None
    if not isinstance(info, dict):
        return None, None
    gpus = info.get("Gpus")
    first = gpus[0] if isinstance(gpus, list) and gpus and isinstance(gpus[0], dict) else {}
    name = first.get("Name") if isinstance(first.get("Name"), str) else None
    memory = first.get("MemoryInfo")
    size = memory.get("SizeInMiB") if isinstance(memory, dict) else None
    if isinstance(size, bool) or not isinstance(size, (int, float)) or not math.isfinite(size) or size <= 0:
        size = None
    return name, (float(size) if size is not None else None)


def rows(path: Path, label: str, issues: list[ImportIssue]) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number where the record starts, row) for each well-formed CSV record; bad ones become issues."""
    with open(path, newline="", encoding="utf-8", errors="replace") as handle:
        reader = csv.reader(handle)
        try:
            header = next(reader)
        except StopIteration:
            issues.append(ImportIssue(label, None, "empty file"))
            return
        except csv.Error as error:
            issues.append(ImportIssue(label, 1, f"unreadable header: {error}"))
            return
        header = [h.strip().lstrip("\ufeff") for h in header]
        missing = [c for c in REQUIRED_COLUMNS if c not in header]
        if missing:
            issues.append(ImportIssue(label, 1, f"missing column(s) {', '.join(missing)}; file skipped"))
            return
        while True:
            start = reader.line_num + 1
            try:
                record = next(reader)
            except StopIteration:
                return
            except csv.Error as error:
                issues.append(ImportIssue(label, start, f"corrupt CSV line: {error}"))
                continue
            if not record or all(not cell.strip() for cell in record):
                continue
            if len(record) != len(header):
                issues.append(
                    ImportIssue(label, start, f"corrupt CSV line: {len(record)} fields, header has {len(header)}")
                )
                continue
            yield start, dict(zip(header, record))


def discover_catalog_files(folder: Path) -> dict[str, Path]:
    """{cloud: csv path} for ``<folder>/<cloud>/vms.csv`` and ``<folder>/<cloud>.csv`` (the first wins)."""
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise FileNotFoundError(f"catalog folder not found: {folder}")
    found: dict[str, Path] = {}
    for path in sorted(folder.glob("*/vms.csv")):
        found.setdefault(path.parent.name.lower(), path)
    for path in sorted(folder.glob("*.csv")):
        found.setdefault(path.stem.lower(), path)
    found.pop("common", None)
    return found


def dedupe_offers(offers: list[Offer]) -> list[Offer]:
    """Offers without exact repeats (same provider, type, place, GPU, count and prices), first kept."""
    seen: set[tuple[Any, ...]] = set()
    unique: list[Offer] = []
    for offer in offers:
        key = (
            offer.provider,
            offer.instance_type,
            offer.region,
            offer.zone,
            offer.gpu,
            offer.gpu_count,
            offer.price_per_hour,
            offer.spot_price_per_hour,
        )
        if key in seen:
            continue
        seen.add(key)
        unique.append(offer)
    return unique


def read_source_date(folder: Path) -> str | None:
    """The 'Retrieved:' date of a SOURCE.md beside the CSVs (the shared snapshot has one)."""
    source = Path(folder) / "SOURCE.md"
    if source.is_file():
        match = re.search(r"Retrieved:\**\s*(\d{4}-\d{2}-\d{2})", source.read_text(encoding="utf-8", errors="replace"))
        if match:
            return match.group(1)
    return None


def newest_mtime(paths: Any) -> str:
    """UTC date of the newest file among `paths`."""
    newest = max(Path(p).stat().st_mtime for p in paths)
    return datetime.fromtimestamp(newest, tz=UTC).date().isoformat()
