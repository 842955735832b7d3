"""Importer for GPU offer catalogs in SkyPilot's format (schema v7: one ``vms.csv`` per cloud).

Reads either layout:

* SkyPilot's own cache, e.g. ``~/.sky/catalogs/v7/<cloud>/vms.csv`` (a user with SkyPilot installed gets fresh prices);
* a flat folder of ``<cloud>.csv`` files, like ``shared/data/skypilot-catalog-v7``.

Columns are chosen by header name (their order differs per cloud). The jobs live in ``tools/catalog/importers/``:

* ``common``: CSV records, numbers and prices. ``GpuInfo`` is a Python literal (or JSON in primeintellect, or a bare
  GPU name in runpod), parsed with ``json.loads`` or ``ast.literal_eval`` (never ``eval``); a value that is neither
  a literal nor a plain name (e.g. code) is reported and the row skipped. ``SpotPrice`` empty, ``0``/``0.00`` (vast)
  or ``>= 99999999`` (primeintellect placeholder) means "no spot offer" and becomes ``None``; the same for an empty or
  zero ``Price``. A negative or non-finite price is reported and the row skipped.
* ``gpu_resolution``: the GPU of a row. ``GpuInfo`` memory is per GPU in aws, gcp, lambda, simplepod, hyperbolic,
  cudo, mithril, seeweb; the SUM over the instance's GPUs in vast and primeintellect; host RAM in nebius (ignored);
  absent in runpod and shadeform. It tells memory variants apart (A100 40/80 GB, V100 16/32 GB, H100 NVL 94 GB), and
  where it names a variant the spec table lacks (vast's 48 GB RTX 4090) it is the offer's memory; otherwise
  ``vram_gib_per_gpu`` is the spec table's usable memory. A multi-GPU offer whose GPU-to-GPU path the catalog does not
  state (form factor unknown, or two bridge-capable cards) is modelled as PCIe with ``interconnect_assumed=True``.
* ``rows`` (every cloud but GCP) and ``gcp``: GCP's GPU machine types carry host-only prices and the GPUs are
  separate rows; an offer is host row + accelerator row of the same zone. n1-hosted GPUs are not offers.
* ``tools/catalog/price_trust.py``: ``on_demand_is_market`` and ``price_outlier`` of every offer, per file and again over the
  whole folder (peers from other providers).

Every problem is an ``ImportIssue`` with file and line; bad rows are skipped, never executed.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from tools.catalog.importers.common import (
    MAX_GPUINFO_CHARS,
    REQUIRED_COLUMNS,
    SPOT_SENTINEL,
    ImportIssue,
    ImportResult,
    RowError,
    dedupe_offers,
    discover_catalog_files,
    newest_mtime,
    parse_gpu_info,
    read_source_date,
)
from tools.catalog.importers.gcp import import_gcp
from tools.catalog.importers.gpu_resolution import (
    AGGREGATORS,
    FORM_FACTOR_RULES,
    GPU_MEMORY_SEMANTICS,
    ResolvedGpu,
    interconnect_for,
    resolve_gpu,
)
from tools.catalog.importers.offer_rows import import_offer_rows
from tools.catalog.price_trust import annotate_price_trust, market_price_evidence, pricing_of

__all__ = [
    "AGGREGATORS",
    "FORM_FACTOR_RULES",
    "GPU_MEMORY_SEMANTICS",
    "MAX_GPUINFO_CHARS",
    "REQUIRED_COLUMNS",
    "SPOT_SENTINEL",
    "ImportIssue",
    "ImportResult",
    "ResolvedGpu",
    "RowError",
    "dedupe_offers",
    "discover_catalog_files",
    "import_catalog_dir",
    "import_cloud_file",
    "interconnect_for",
    "parse_gpu_info",
    "read_source_date",
    "resolve_gpu",
    "today",
]


def import_cloud_file(path: Path, cloud: str, *, snapshot_date: str, label: str | None = None) -> ImportResult:
    """Offers from one cloud's vms.csv; issues name `label` (default: the file name) and the line. Price trust is
    computed among this file's offers (same instance type in other zones)."""
    cloud = cloud.lower()
    label = label or Path(path).name
    result = ImportResult(snapshot_date=snapshot_date)
    if cloud == "gcp":
        import_gcp(Path(path), label, snapshot_date, result)
    else:
        import_offer_rows(Path(path), cloud, label, snapshot_date, result)
    result.offers = annotate_price_trust(result.offers)
    result.notes.extend(_market_notes(result.offers, label))
    result.counts[cloud] = len(result.offers)
    return result


def _market_notes(offers: list[Any], label: str) -> list[str]:
    """A note for a provider that lists Price == SpotPrice everywhere but is not known as market-priced."""
    notes = []
    for provider in sorted(market_price_evidence(offers)):
        info = pricing_of(provider)
        if not (info and info.on_demand_is_market):
            notes.append(
                f"{label}: {provider} lists the same on-demand and spot price on every row; its on-demand "
                "price is treated as a market (interruptible) price"
            )
    return notes


def import_catalog_dir(
    folder: Path | str, *, source: str | None = None, snapshot_date: str | None = None, clouds: list[str] | None = None
) -> ImportResult:
    """Import every cloud's CSV in a SkyPilot-format catalog folder (both layouts), de-duplicating exact repeats;
    price trust is then computed over all clouds together (peers from other providers)."""
    folder = Path(folder).expanduser()
    files = discover_catalog_files(folder)
    if clouds:
        files = {c: p for c, p in files.items() if c in {x.lower() for x in clouds}}
    if not files:
        raise FileNotFoundError(f"no <cloud>.csv or <cloud>/vms.csv files in {folder}")
    if snapshot_date is None:
        snapshot_date = read_source_date(folder) or newest_mtime(files.values())
    result = ImportResult(source=source or f"SkyPilot catalog v7 at {folder}", snapshot_date=snapshot_date)
    for cloud, path in files.items():
        label = f"{path.parent.name}/{path.name}"
        part = import_cloud_file(path, cloud, snapshot_date=snapshot_date, label=label)
        before = len(part.offers)
        part.offers = dedupe_offers(part.offers)
        if len(part.offers) != before:
            result.notes.append(f"{label}: {before - len(part.offers)} exact duplicate rows dropped")
        result.offers.extend(part.offers)
        result.issues.extend(part.issues)
        result.notes.extend(part.notes)
        result.counts[cloud] = len(part.offers)
    result.offers = annotate_price_trust(result.offers)
    return result


def today() -> str:
    """Today's date, ISO format."""
    return date.today().isoformat()
