"""`gpu-advisor catalog update`: fetch the current SkyPilot catalog files over HTTP and rebuild the database atomically.

Steps: download every cloud's ``vms.csv`` into a temp dir (``{base}/{cloud}/vms.csv``, SkyPilot's hosted layout, or
``{base}/{cloud}.csv``, a flat folder) within one overall deadline (``--timeout``), validate each file (HTTP 200,
exact Content-Length when the server sends one, ends with a newline, has the required header, yields offers),
import, check the result against the current catalog (no cloud may lose more than half its offers: a file cut at a
line break; ``allow_shrink`` accepts it) and against plausible prices per GPU (implausible rows are dropped and
reported; too many fail the update), build a NEW database file beside the old one, then ``os.replace`` it over the
old one. Any failure raises ``UpdateError`` and leaves the old database untouched; a file at the target path that is
not a gpu-advisor catalog is never replaced.

The base URL comes from ``--base-url``, else ``$GPU_ADVISOR_CATALOG_URL``, else ``DEFAULT_BASE_URL``.
Standard library only (urllib).
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from tools.catalog.db import CatalogCheck, CatalogError, build_db, check_replaceable, inspect_catalog
from tools.catalog.http_fetch import DownloadError, download
from tools.catalog.importers import (
    REQUIRED_COLUMNS,
    ImportResult,
    dedupe_offers,
    import_cloud_file,
)
from tools.catalog.paths import resolve_db_path
from tools.catalog.sanity import MAX_BAD_PRICE_SHARE, shrink_problem, split_by_price
from tools.catalog.snapshot import read_snapshot, snapshot_header
from tools.providers import all_records

DEFAULT_BASE_URL = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v7"
ENV_BASE_URL = "GPU_ADVISOR_CATALOG_URL"
DEFAULT_CLOUDS = tuple(
    pid for pid, record in all_records().items() if record.catalog is not None and record.catalog.refreshed_by_update
)
"""Clouds whose v7 vms.csv carries GPU offers (shared/data/skypilot-catalog-v7/SOURCE.md): the provider records
with ``catalog.refreshed_by_update``."""
DEFAULT_TIMEOUT_S = 120.0
MAX_TIMEOUT_S = 86_400.0
"""The longest overall download deadline accepted (a day)."""


class UpdateError(RuntimeError):
    """The update failed; the old catalog was left in place."""


@dataclass
class UpdateReport:
    db_path: str
    base_url: str
    files: dict[str, str] = field(default_factory=dict)
    """cloud -> URL fetched."""
    counts: dict[str, int] = field(default_factory=dict)
    """Offers per refreshed cloud."""
    kept: dict[str, int] = field(default_factory=dict)
    """Offers per cloud not refreshed (an update of some clouds keeps the others as they were)."""
    offers: int = 0
    issues: list[str] = field(default_factory=list)
    snapshot_date: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "db_path": self.db_path,
            "base_url": self.base_url,
            "files": self.files,
            "counts": self.counts,
            "kept": self.kept,
            "offers": self.offers,
            "issues": self.issues,
            "snapshot_date": self.snapshot_date,
        }


def resolve_base_url(base_url: str | None) -> str:
    return (base_url or os.environ.get(ENV_BASE_URL) or DEFAULT_BASE_URL).rstrip("/")


def _validate(path: Path, url: str) -> None:
    data = path.read_bytes()
    if not data.strip():
        raise UpdateError(f"{url}: empty file")
    if not data.endswith(b"\n"):
        raise UpdateError(f"{url}: does not end with a newline (truncated download?)")
    header = data.split(b"\n", 1)[0].decode("utf-8", errors="replace")
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise UpdateError(f"{url}: not a SkyPilot vms.csv (missing column(s) {', '.join(missing)})")


def fetch_catalog(
    base_url: str, dest: Path, clouds: tuple[str, ...] | list[str] = DEFAULT_CLOUDS, timeout: float = DEFAULT_TIMEOUT_S
) -> dict[str, tuple[Path, str]]:
    """Download each cloud's file into dest/<cloud>.csv, all within `timeout` seconds; {cloud: (path, url)}."""
    deadline = time.monotonic() + timeout
    fetched: dict[str, tuple[Path, str]] = {}
    for cloud in clouds:
        path = dest / f"{cloud}.csv"
        for url in (f"{base_url}/{cloud}/vms.csv", f"{base_url}/{cloud}.csv"):
            try:
                found = download(url, path, deadline, timeout)
            except DownloadError as error:
                raise UpdateError(str(error)) from error
            if found:
                _validate(path, url)
                fetched[cloud] = (path, url)
                break
        else:
            raise UpdateError(f"{cloud}: not found at {base_url}/{cloud}/vms.csv nor {base_url}/{cloud}.csv")
    return fetched


def _current_check(target: Path) -> CatalogCheck | None:
    """The quick check of the catalog about to be replaced (None when there is none we can read)."""
    try:
        return inspect_catalog(target, deep=False)
    except CatalogError:
        return None


def _current_counts(check: CatalogCheck | None) -> dict[str, int]:
    """Offers per cloud in the catalog about to be replaced, else in the shipped snapshot (the reference)."""
    counts = check.meta.get("counts") if check and check.state in ("ok", "outdated") else None
    if not isinstance(counts, dict):
        try:
            counts = snapshot_header().get("counts") or {}
        except (OSError, ValueError):
            counts = {}
    return {str(k): int(v) for k, v in counts.items() if isinstance(v, int)}


def _kept_offers(target: Path, check: CatalogCheck | None, refreshed: set[str]) -> list[Any]:
    """The offers of every cloud not refreshed: from the catalog being replaced, else from the shipped snapshot."""
    from tools.catalog.query import query_offers

    if check is not None and check.state == "ok":
        providers = [p for p in (check.meta.get("counts") or {}) if p not in refreshed]
        return query_offers(target, providers=providers) if providers else []
    try:
        _meta, offers = read_snapshot()
    except (OSError, ValueError):
        return []
    return [o for o in offers if o.provider not in refreshed]


def update_catalog(
    db_path: Path | str | None = None,
    *,
    base_url: str | None = None,
    clouds: tuple[str, ...] | list[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    allow_shrink: bool = False,
    prepare: Callable[[Path], object] | None = None,
) -> UpdateReport:
    """Fetch, validate, import and atomically replace the catalog database. Raises UpdateError (old DB kept).
    timeout: seconds for all downloads together; prepare: as build_db's."""
    base = resolve_base_url(base_url)
    if not base.startswith(("http://", "https://")):
        raise UpdateError(f"base URL must be http(s): {base}")
    if not (math.isfinite(timeout) and 0 < timeout <= MAX_TIMEOUT_S):
        raise UpdateError(f"--timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT_S:g}")
    unknown = [c for c in (clouds or ()) if c.lower() not in DEFAULT_CLOUDS]
    if unknown:
        raise UpdateError(f"unknown cloud '{unknown[0][:40]}'; clouds with GPU offers: {', '.join(DEFAULT_CLOUDS)}")
    target, explicit = resolve_db_path(db_path)
    if explicit and not target.parent.is_dir():
        raise UpdateError(f"folder {target.parent} does not exist (not creating it for an explicit catalog path)")
    try:
        check_replaceable(target)  # before downloading anything
    except CatalogError as error:
        raise UpdateError(str(error)) from error
    clouds = tuple(c.lower() for c in (clouds or DEFAULT_CLOUDS))
    snapshot_date = date.today().isoformat()
    report = UpdateReport(db_path=str(target), base_url=base, snapshot_date=snapshot_date)
    check = _current_check(target)
    current = _current_counts(check)
    tmp = Path(tempfile.mkdtemp(prefix="gpu-advisor-catalog-"))
    try:
        fetched = fetch_catalog(base, tmp, clouds, timeout)
        combined = ImportResult(source=f"SkyPilot catalog v7 from {base}", snapshot_date=snapshot_date)
        for cloud, (path, url) in fetched.items():
            part = import_cloud_file(path, cloud, snapshot_date=snapshot_date, label=url)
            if not part.offers:
                raise UpdateError(f"{url}: no usable GPU offers ({len(part.issues)} problem rows)")
            offers, bad = split_by_price(dedupe_offers(part.offers))
            if len(bad) > MAX_BAD_PRICE_SHARE * (len(offers) + len(bad)):
                raise UpdateError(
                    f"{url}: {len(bad)} of {len(offers) + len(bad)} offers have implausible prices, "
                    f"e.g. {bad[0].offer.source}: {bad[0].message}"
                )
            problem = None if allow_shrink else shrink_problem(cloud, len(offers), current.get(cloud))
            if problem:
                raise UpdateError(f"{url}: {problem}")
            combined.offers.extend(offers)
            combined.issues.extend(part.issues)
            report.issues.extend(f"{p.offer.source}: {p.message}; row skipped" for p in bad)
            combined.counts[cloud] = len(offers)
            report.files[cloud] = url
        kept = _kept_offers(target, check, set(fetched))
        report.kept = dict(Counter(offer.provider for offer in kept))
        meta = {
            "source": combined.source,
            "snapshot_date": snapshot_date,
            "built_from": base,
            "counts": {**report.kept, **combined.counts},
            "issues": len(combined.issues) + len(report.issues),
        }
        combined.offers.extend(kept)
        try:
            build_db(target, combined.offers, meta, create_parent=not explicit, prepare=prepare)
        except (CatalogError, OSError) as error:
            raise UpdateError(f"cannot write {target}: {getattr(error, 'strerror', None) or error}") from error
        report.counts = combined.counts
        report.offers = len(combined.offers)
        report.issues = [str(i) for i in combined.issues] + report.issues
        return report
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
