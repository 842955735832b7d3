"""`gpu-advisor catalog update`: fetch the current SkyPilot catalog files over HTTP and rebuild the database atomically.

Steps: download every cloud's ``vms.csv`` into a temp dir (``{base}/{cloud}/vms.csv``, SkyPilot's hosted layout, or
``{base}/{cloud}.csv``, a flat folder), validate each file (HTTP 200, exact Content-Length when the server sends one,
ends with a newline, has the required header, yields offers), import, build a NEW database file beside the old one,
then ``os.replace`` it over the old one. Any failure — an HTTP error, a server that dies mid-file, truncated or
malformed content — raises ``UpdateError`` and leaves the old database untouched.

The base URL comes from ``--base-url``, else ``$GPU_ADVISOR_CATALOG_URL``, else ``DEFAULT_BASE_URL``.
Standard library only (urllib).
"""

from __future__ import annotations

import http.client
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from tools.catalog import build_db, default_db_path
from tools.catalog_import import REQUIRED_COLUMNS, ImportResult, dedupe_offers, import_cloud_file

DEFAULT_BASE_URL = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v7"
ENV_BASE_URL = "GPU_ADVISOR_CATALOG_URL"
DEFAULT_CLOUDS = ("aws", "gcp", "lambda", "runpod", "vast", "cudo", "hyperbolic", "nebius", "seeweb", "shadeform",
                  "primeintellect", "mithril", "simplepod")
"""Clouds whose v7 vms.csv carries GPU offers (shared/data/skypilot-catalog-v7/SOURCE.md)."""
MAX_FILE_BYTES = 64 * 1024 * 1024
CHUNK = 64 * 1024


class UpdateError(RuntimeError):
    """The update failed; the old catalog was left in place."""


@dataclass
class UpdateReport:
    db_path: str
    base_url: str
    files: dict[str, str] = field(default_factory=dict)
    """cloud -> URL fetched."""
    counts: dict[str, int] = field(default_factory=dict)
    offers: int = 0
    issues: list[str] = field(default_factory=list)
    snapshot_date: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"db_path": self.db_path, "base_url": self.base_url, "files": self.files, "counts": self.counts,
                "offers": self.offers, "issues": self.issues, "snapshot_date": self.snapshot_date}


def resolve_base_url(base_url: str | None) -> str:
    return (base_url or os.environ.get(ENV_BASE_URL) or DEFAULT_BASE_URL).rstrip("/")


def _download(url: str, dest: Path, timeout: float) -> bool:
    """Fetch url into dest. False on HTTP 404 (try the other layout); UpdateError on anything else that is wrong."""
    try:
        response = urllib.request.urlopen(url, timeout=timeout)  # noqa: S310 - http(s) URL chosen by the user
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return False
        raise UpdateError(f"{url}: HTTP {error.code} {error.reason}") from error
    except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
        raise UpdateError(f"{url}: {getattr(error, 'reason', error)}") from error
    with response:
        status = getattr(response, "status", 200)
        if status != 200:
            raise UpdateError(f"{url}: HTTP {status}")
        expected = response.headers.get("Content-Length")
        received = 0
        try:
            with open(dest, "wb") as out:
                while True:
                    chunk = response.read(CHUNK)
                    if not chunk:
                        break
                    received += len(chunk)
                    if received > MAX_FILE_BYTES:
                        raise UpdateError(f"{url}: larger than {MAX_FILE_BYTES} bytes")
                    out.write(chunk)
        except http.client.IncompleteRead as error:
            raise UpdateError(f"{url}: connection closed after {received + len(error.partial)} bytes, "
                              f"expected {expected}") from error
        except (OSError, http.client.HTTPException) as error:
            raise UpdateError(f"{url}: download interrupted after {received} bytes ({error})") from error
    if expected is not None and expected.isdigit() and received != int(expected):
        raise UpdateError(f"{url}: got {received} bytes, Content-Length said {expected} (truncated download)")
    return True


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


def fetch_catalog(base_url: str, dest: Path, clouds: tuple[str, ...] | list[str] = DEFAULT_CLOUDS,
                  timeout: float = 60.0) -> dict[str, tuple[Path, str]]:
    """Download each cloud's file into dest/<cloud>.csv; {cloud: (path, url)}."""
    fetched: dict[str, tuple[Path, str]] = {}
    for cloud in clouds:
        path = dest / f"{cloud}.csv"
        for url in (f"{base_url}/{cloud}/vms.csv", f"{base_url}/{cloud}.csv"):
            if _download(url, path, timeout):
                _validate(path, url)
                fetched[cloud] = (path, url)
                break
        else:
            raise UpdateError(f"{cloud}: not found at {base_url}/{cloud}/vms.csv nor {base_url}/{cloud}.csv")
    return fetched


def update_catalog(db_path: Path | str | None = None, *, base_url: str | None = None,
                   clouds: tuple[str, ...] | list[str] | None = None, timeout: float = 60.0) -> UpdateReport:
    """Fetch, validate, import and atomically replace the catalog database. Raises UpdateError (old DB kept)."""
    base = resolve_base_url(base_url)
    if not base.startswith(("http://", "https://")):
        raise UpdateError(f"base URL must be http(s): {base}")
    target = Path(db_path).expanduser() if db_path else default_db_path()
    clouds = tuple(c.lower() for c in (clouds or DEFAULT_CLOUDS))
    snapshot_date = date.today().isoformat()
    report = UpdateReport(db_path=str(target), base_url=base, snapshot_date=snapshot_date)
    tmp = Path(tempfile.mkdtemp(prefix="gpu-advisor-catalog-"))
    try:
        fetched = fetch_catalog(base, tmp, clouds, timeout)
        combined = ImportResult(source=f"SkyPilot catalog v7 from {base}", snapshot_date=snapshot_date)
        for cloud, (path, url) in fetched.items():
            part = import_cloud_file(path, cloud, snapshot_date=snapshot_date, label=url)
            if not part.offers:
                raise UpdateError(f"{url}: no usable GPU offers ({len(part.issues)} problem rows)")
            part.offers = dedupe_offers(part.offers)
            combined.offers.extend(part.offers)
            combined.issues.extend(part.issues)
            combined.counts[cloud] = len(part.offers)
            report.files[cloud] = url
        meta = {"source": combined.source, "snapshot_date": snapshot_date, "built_from": base,
                "counts": combined.counts, "issues": len(combined.issues)}
        build_db(target, combined.offers, meta)
        report.counts = combined.counts
        report.offers = len(combined.offers)
        report.issues = [str(i) for i in combined.issues]
        return report
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
