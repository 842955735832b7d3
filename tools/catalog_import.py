"""Importer for GPU offer catalogs in SkyPilot's format (schema v7: one ``vms.csv`` per cloud).

Reads either layout:

* SkyPilot's own cache, e.g. ``~/.sky/catalogs/v7/<cloud>/vms.csv`` (a user with SkyPilot installed gets fresh prices);
* a flat folder of ``<cloud>.csv`` files, like ``shared/data/skypilot-catalog-v7``.

Columns are chosen by header name (their order differs per cloud). Per-cloud quirks handled here, from
``shared/reference/hardware.md`` §5 and ``shared/data/skypilot-catalog-v7/SOURCE.md``:

* ``GpuInfo`` is a Python literal (or JSON in primeintellect, or a bare GPU name in runpod). It is parsed with
  ``json.loads`` or ``ast.literal_eval`` — never ``eval`` — and a value that is neither a literal nor a plain name
  (e.g. code) is reported and the row skipped.
* GPU memory in ``GpuInfo``: per GPU in aws, gcp, lambda, simplepod, hyperbolic, cudo, mithril, seeweb; the SUM over
  the instance's GPUs in vast and primeintellect (divided by the count here); host RAM in nebius (ignored); absent in
  runpod and shadeform. It is only used to tell memory variants apart (A100 40 vs 80 GB, V100 16 vs 32 GB, H100 NVL's
  94 GB); the offer's ``vram_gib_per_gpu`` comes from the GPU spec table (``tools/gpus.py``) when the GPU is in it.
* ``SpotPrice`` empty, ``0``/``0.00`` (vast) or ``>= 99999999`` (primeintellect placeholder) means "no spot offer" and
  becomes ``None``; the same for an empty or zero ``Price``. A negative or non-finite price is reported and the row
  skipped.
* gcp: GPU machine types (a2/a3/g2) carry host-only prices and the GPUs are separate rows without an instance type;
  an offer is host row + accelerator row of the same zone (``Price`` and ``SpotPrice`` added). Accelerators that
  attach to n1 hosts (T4, V100, P100, P4) have no fixed shape and are not turned into offers.

Every problem is an ``ImportIssue`` with file and line; bad rows are skipped, never executed.
"""

from __future__ import annotations

import ast
import csv
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

from tools.offer import Offer
from tools.gpus import GpuSpec, parse_gpu_name
from tools.providers import inter_node_fabric

SPOT_SENTINEL = 99_999_999.0
"""primeintellect's placeholder for "no spot price"."""

MAX_GPUINFO_CHARS = 4000
"""A GpuInfo longer than this is rejected before parsing (real ones are < 300 characters)."""

REQUIRED_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")

GPU_MEMORY_SEMANTICS: dict[str, str] = {
    "aws": "per_gpu", "gcp": "per_gpu", "lambda": "per_gpu", "simplepod": "per_gpu", "hyperbolic": "per_gpu",
    "cudo": "per_gpu", "mithril": "per_gpu", "seeweb": "per_gpu",
    "vast": "summed", "primeintellect": "summed",
    "nebius": "ignore", "runpod": "ignore", "shadeform": "ignore",
}
"""What GpuInfo's ``Gpus[0].MemoryInfo.SizeInMiB`` means per cloud (SOURCE.md 'Per-cloud caveats'). Other clouds:
per GPU, as SkyPilot's own ``list_accelerators`` reads it."""

AGGREGATORS = {"shadeform", "primeintellect"}
"""Clouds whose instance-type prefix names the underlying provider (``<upstream>_...`` / ``<upstream>__...``)."""

FORM_FACTOR_RULES: list[tuple[str, str, str, str]] = [
    # (cloud, instance-type regex, form factor, source)
    ("aws", r"^p4de?\.", "SXM", "AWS p4d/p4de: A100 SXM with NVLink gen 3 600 GB/s (gist.github.com/shashankprasanna/"
     "10ebe6dc1ba1d8d93db17da4e2cc890e, AWS staff; datareceipts hyperscalers.json)"),
    ("aws", r"^p5\.", "SXM", "AWS p5: H100 SXM (datareceipts hyperscalers.json)"),
    ("aws", r"^p3(dn)?\.", "SXM", "AWS p3/p3dn: V100 with NVLink (gist.github.com/shashankprasanna/"
     "10ebe6dc1ba1d8d93db17da4e2cc890e)"),
    ("gcp", r"^a2-|^a3-", "SXM", "GCP A2/A3 GPUs: 'NVLink Full Mesh' 600/900 GB/s per GCP's GPU table (as quoted in "
     "huggingface.co/spaces/Elfsong/gcp_allocator)"),
    ("runpod", r".", "PCIe", "runpod names SXM and NVL variants explicitly (A100-80GB-SXM, H100-SXM, H100-NVL); a "
     "plain name is the PCIe card (hardware.md §5)"),
]

_GCP_L4_COUNT = {4: 1, 8: 1, 12: 1, 16: 1, 32: 1, 24: 2, 48: 4, 96: 8}
"""g2-standard-N -> L4 count, by GCP's G2 shapes (SOURCE.md 'How a GCP GPU offer's price is formed')."""


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


# ----------------------------------------------------------------------------------------------------- parsing helpers

def _number(value: str | None, column: str) -> float | None:
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        number = float(text)
    except ValueError as error:
        raise RowError(f"{column} is not a number: {text[:40]!r}") from error
    if not math.isfinite(number):
        raise RowError(f"{column} is not finite: {text[:40]!r}")
    if number < 0:
        raise RowError(f"{column} is negative: {text[:40]!r}")
    return number


def _price(value: str | None, column: str) -> float | None:
    """USD/hour, or None for 'not offered' (empty, 0, or the 99999999 placeholder)."""
    number = _number(value, column)
    if number is None or number == 0 or number >= SPOT_SENTINEL:
        return None
    return number


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
            parsed: Any = __import__("json").loads(value)
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


def _gpu_info_fields(info: dict[str, Any] | str | None) -> tuple[str | None, float | None]:
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


def _form_from_text(*texts: str | None) -> str | None:
    """Form factor named in instance types or upstream ids: NVL beats SXM beats PCIe ('h100-nvl-pcie' is NVL)."""
    joined = " ".join(t for t in texts if t).lower()
    if re.search(r"nvl(?!ink)", joined):
        return "NVL"
    if "sxm" in joined:
        return "SXM"
    if "pcie" in joined:
        return "PCIe"
    return None


def _memory_from_text(*texts: str | None) -> float | None:
    """A GPU memory size written in an instance type or upstream id ('gpu_8x_a100_80gb_sxm4' -> 80)."""
    for text in texts:
        if not text:
            continue
        match = re.search(r"(?<![0-9a-z])(16|24|32|40|48|80|94|96|141|180|192)\s*g(?:b|ib)?(?![0-9a-z])", text.lower())
        if match:
            return float(match.group(1))
    return None


def _upstream(cloud: str, instance_type: str) -> str | None:
    if cloud not in AGGREGATORS:
        return None
    match = re.match(r"^([a-z0-9]+)_", instance_type, re.IGNORECASE)
    return match.group(1).lower() if match else None


# ------------------------------------------------------------------------------------------------ GPU resolution


@dataclass(frozen=True)
class ResolvedGpu:
    name: str
    """Canonical name (tools.gpus), or the catalog's name when the GPU is not in the spec table."""
    form_factor: str | None
    spec: GpuSpec | None
    vram_gib: float | None


def resolve_gpu(cloud: str, accelerator: str, instance_type: str, *, info_name: str | None = None,
                upstream_id: str | None = None, reported_mib: float | None = None,
                gpu_count: int = 1) -> ResolvedGpu:
    """Canonical GPU, form factor and per-GPU memory of one catalog row, from every hint it carries."""
    parsed = parse_gpu_name(accelerator) or (parse_gpu_name(info_name) if info_name else None)
    if parsed is None:
        memory = None
        if reported_mib and GPU_MEMORY_SEMANTICS.get(cloud, "per_gpu") != "ignore":
            per_gpu = reported_mib / gpu_count if GPU_MEMORY_SEMANTICS.get(cloud) == "summed" else reported_mib
            memory = round(per_gpu / 1024, 2)
        return ResolvedGpu(accelerator.strip(), None, None, memory)

    # memory evidence, to tell variants apart (A100 40/80, V100 16/32, H100 NVL)
    memory_gib: float | None = parsed.memory_gb
    semantics = GPU_MEMORY_SEMANTICS.get(cloud, "per_gpu")
    if memory_gib is None and reported_mib and semantics != "ignore":
        per_gpu_mib = reported_mib / gpu_count if semantics == "summed" else reported_mib
        if 1024 <= per_gpu_mib <= 400 * 1024:
            memory_gib = per_gpu_mib / 1024
    if memory_gib is None:
        memory_gib = _memory_from_text(upstream_id, instance_type)
    name = parsed.name
    form = parsed.form_factor
    if memory_gib is not None and parsed.memory_gb is None:
        again = parse_gpu_name(f"{accelerator} {round(memory_gib)}GB")
        if again is not None and again.name.split("-")[0] == parsed.name.split("-")[0]:
            name = again.name
            form = form or again.form_factor

    variants = [s for s in _variants(name)]
    if form is None and info_name:
        named = parse_gpu_name(info_name)  # driver names such as 'NVIDIA-H100-80GB-HBM3' (the SXM card)
        if named is not None and named.name == name:
            form = named.form_factor
    if form is None:
        form = _form_from_text(instance_type, upstream_id, info_name)
    if form is None:
        for rule_cloud, pattern, rule_form, _source in FORM_FACTOR_RULES:
            if rule_cloud == cloud and re.search(pattern, instance_type or ""):
                form = rule_form
                break
    forms = {s.form_factor for s in variants}
    if form is not None and form not in forms:
        # the hint names a form this model does not come in (e.g. 'pcie' on an SXM-only table row): ignore it
        form = None
    if form is None and len(forms) == 1:
        form = next(iter(forms))  # the model comes in one form factor only
    spec = next((s for s in variants if s.form_factor == form), None) if form else None
    reference = spec or next((s for s in variants if s.default), None)
    vram = reference.memory_gib if reference and reference.memory_gib is not None else (
        round(memory_gib, 2) if memory_gib is not None else None)
    return ResolvedGpu(name, form, spec or (reference if len(variants) == 1 else None), vram)


def _variants(name: str) -> list[GpuSpec]:
    from tools.gpus import gpu_variants
    return gpu_variants(name)


def interconnect_for(resolved: ResolvedGpu, gpu_count: int) -> tuple[str, float | None]:
    """('nvlink'|'pcie'|'unknown'|'none', unidirectional NVLink GB/s per GPU or None) inside one instance.

    'none' for single-GPU offers; 'nvlink' when all GPUs share NVLink (SXM boards); 'pcie' when the card has no
    NVLink, or only a 2-way bridge and the instance has more than 2 GPUs (collectives then cross PCIe); 'unknown'
    when the form factor is unknown, or for 2 bridge-capable cards (bridge fitted or not is not in the catalog)."""
    if gpu_count <= 1:
        return "none", None
    spec = resolved.spec
    if spec is None or spec.form_factor is None:
        return "unknown", None  # form factor unknown: NVLink or not cannot be told
    if spec.gpu_link == "nvlink":
        return "nvlink", spec.nvlink_gbs
    if spec.gpu_link == "nvlink-bridge":
        return ("pcie", None) if gpu_count > 2 else ("unknown", spec.nvlink_gbs)
    if spec.gpu_link is None:
        return "pcie", None
    return "unknown", None


# ------------------------------------------------------------------------------------------------ files and rows


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


def _rows(path: Path, label: str, issues: list[ImportIssue]) -> Iterator[tuple[int, dict[str, str]]]:
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
                issues.append(ImportIssue(label, start, f"corrupt CSV line: {len(record)} fields, header has "
                                                        f"{len(header)}"))
                continue
            yield start, dict(zip(header, record))


def _count(value: str | None) -> int:
    number = _number(value, "AcceleratorCount")
    if number is None or number < 1 or abs(number - round(number)) > 1e-6:
        raise RowError(f"AcceleratorCount is not a whole number >= 1: {value!r}")
    return int(round(number))


def _offer(cloud: str, label: str, line: int, snapshot_date: str, *, instance_type: str, accelerator: str,
           count: int, region: str, zone: str | None, vcpus: float | None, host_ram: float | None,
           price: float | None, spot: float | None, info: dict[str, Any] | str | None,
           upstream_id: str | None) -> Offer:
    info_name, reported = _gpu_info_fields(info)
    resolved = resolve_gpu(cloud, accelerator, instance_type, info_name=info_name, upstream_id=upstream_id,
                           reported_mib=reported, gpu_count=count)
    interconnect, nvlink = interconnect_for(resolved, count)
    fabric = inter_node_fabric(cloud, instance_type)
    return Offer(
        provider=cloud,
        upstream_provider=_upstream(cloud, instance_type),
        instance_type=instance_type,
        region=region or None,
        zone=zone or None,
        gpu=resolved.name,
        gpu_form_factor=resolved.form_factor,
        accelerator_name=accelerator,
        gpu_count=count,
        vram_gib_per_gpu=resolved.vram_gib,
        vcpus=vcpus,
        host_ram_gib=host_ram,
        price_per_hour=price,
        spot_price_per_hour=spot,
        interconnect=interconnect,
        nvlink_gbs=nvlink,
        inter_node_fabric=fabric.fabric if fabric else None,
        inter_node_gbps_per_gpu=fabric.per_gpu_gbps if fabric else None,
        source=f"{label}:{line}",
        snapshot_date=snapshot_date,
    )


def import_cloud_file(path: Path, cloud: str, *, snapshot_date: str, label: str | None = None) -> ImportResult:
    """Offers from one cloud's vms.csv; issues name `label` (default: the file name) and the line."""
    cloud = cloud.lower()
    label = label or path.name
    result = ImportResult(snapshot_date=snapshot_date)
    if cloud == "gcp":
        _import_gcp(path, label, snapshot_date, result)
    else:
        for line, row in _rows(path, label, result.issues):
            accelerator = (row.get("AcceleratorName") or "").strip()
            if not accelerator:
                continue  # CPU-only machine type
            try:
                offer = _offer(
                    cloud, label, line, snapshot_date,
                    instance_type=row["InstanceType"].strip(), accelerator=accelerator,
                    count=_count(row.get("AcceleratorCount")), region=(row.get("Region") or "").strip(),
                    zone=(row.get("AvailabilityZone") or "").strip() or None,
                    vcpus=_number(row.get("vCPUs"), "vCPUs"), host_ram=_number(row.get("MemoryGiB"), "MemoryGiB"),
                    price=_price(row.get("Price"), "Price"), spot=_price(row.get("SpotPrice"), "SpotPrice"),
                    info=parse_gpu_info(row.get("GpuInfo")), upstream_id=(row.get("UpstreamCloudId") or None))
            except RowError as error:
                result.issues.append(ImportIssue(label, line, f"{error}; row skipped"))
                continue
            if offer.price_per_hour is None and offer.spot_price_per_hour is None:
                result.issues.append(ImportIssue(label, line, "no on-demand and no spot price; row skipped"))
                continue
            result.offers.append(offer)
    result.counts[cloud] = len(result.offers)
    return result


def _gcp_host_count(instance_type: str, accelerator: str) -> int | None:
    """GPUs that a GCP GPU machine type carries, or None when it is not a shape for that accelerator."""
    name = canonical = parse_gpu_name(accelerator)
    if name is None:
        return None
    raw = accelerator.upper()
    match = re.match(r"^a2-(highgpu|megagpu|ultragpu)-(\d+)g$", instance_type)
    if match:
        family, n = match.group(1), int(match.group(2))
        if raw == "A100" and family in {"highgpu", "megagpu"}:
            return n
        if canonical.name == "A100-80GB" and family == "ultragpu":
            return n
        return None
    match = re.match(r"^a3-(highgpu|edgegpu|megagpu|ultragpu)-(\d+)g(-nolssd)?$", instance_type)
    if match:
        family, n = match.group(1), int(match.group(2))
        if raw == "H100" and family in {"highgpu", "edgegpu"}:
            return n
        if raw == "H100-MEGA" and family == "megagpu":
            return n
        if raw == "H200" and family == "ultragpu":
            return n
        return None
    match = re.match(r"^a4-highgpu-(\d+)g$", instance_type)
    if match:
        return int(match.group(1)) if raw == "B200" else None
    match = re.match(r"^g2-standard-(\d+)$", instance_type)
    if match:
        return _GCP_L4_COUNT.get(int(match.group(1))) if raw == "L4" else None
    return None


def _import_gcp(path: Path, label: str, snapshot_date: str, result: ImportResult) -> None:
    hosts: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    accelerators: list[tuple[int, dict[str, Any]]] = []
    for line, row in _rows(path, label, result.issues):
        instance_type = (row.get("InstanceType") or "").strip()
        accelerator = (row.get("AcceleratorName") or "").strip()
        try:
            parsed = {
                "instance_type": instance_type, "accelerator": accelerator,
                "region": (row.get("Region") or "").strip(),
                "zone": (row.get("AvailabilityZone") or "").strip() or None,
                "vcpus": _number(row.get("vCPUs"), "vCPUs"), "host_ram": _number(row.get("MemoryGiB"), "MemoryGiB"),
                "price": _price(row.get("Price"), "Price"), "spot": _price(row.get("SpotPrice"), "SpotPrice"),
            }
            if accelerator:
                parsed["count"] = _count(row.get("AcceleratorCount"))
                parsed["info"] = parse_gpu_info(row.get("GpuInfo"))
        except RowError as error:
            result.issues.append(ImportIssue(label, line, f"{error}; row skipped"))
            continue
        if instance_type and not accelerator:
            if re.match(r"^(a2|a3|a4|g2)-", instance_type):
                hosts.setdefault(parsed["zone"] or parsed["region"], []).append((line, parsed))
        elif accelerator and not instance_type:
            if not accelerator.lower().startswith("tpu"):
                accelerators.append((line, parsed))
        elif accelerator and instance_type:
            # a machine type that carries its accelerator directly: price already complete
            try:
                offer = _offer("gcp", label, line, snapshot_date, instance_type=instance_type,
                               accelerator=accelerator, count=parsed["count"], region=parsed["region"],
                               zone=parsed["zone"], vcpus=parsed["vcpus"], host_ram=parsed["host_ram"],
                               price=parsed["price"], spot=parsed["spot"], info=parsed["info"], upstream_id=None)
            except RowError as error:
                result.issues.append(ImportIssue(label, line, f"{error}; row skipped"))
                continue
            result.offers.append(offer)
    unmatched: dict[str, int] = {}
    for line, acc in accelerators:
        matched = False
        for host_line, host in hosts.get(acc["zone"] or acc["region"], []):
            if _gcp_host_count(host["instance_type"], acc["accelerator"]) != acc["count"]:
                continue
            matched = True
            price = (host["price"] + acc["price"]) if host["price"] is not None and acc["price"] is not None else None
            spot = (host["spot"] + acc["spot"]) if host["spot"] is not None and acc["spot"] is not None else None
            if price is None and spot is None:
                continue
            offer = _offer("gcp", label, line, snapshot_date, instance_type=host["instance_type"],
                           accelerator=acc["accelerator"], count=acc["count"], region=host["region"],
                           zone=host["zone"], vcpus=host["vcpus"], host_ram=host["host_ram"],
                           price=round(price, 6) if price is not None else None,
                           spot=round(spot, 6) if spot is not None else None, info=acc["info"], upstream_id=None)
            result.offers.append(offer.model_copy(update={"source": f"{label}:{host_line}+{line}"}))
        if not matched:
            unmatched[acc["accelerator"]] = unmatched.get(acc["accelerator"], 0) + 1
    if unmatched:
        detail = ", ".join(f"{name} x{n}" for name, n in sorted(unmatched.items()))
        result.notes.append(f"{label}: accelerator rows without a host machine type in the file (n1 hosts or "
                            f"missing a4 rows), not turned into offers: {detail}")


def dedupe_offers(offers: list[Offer]) -> list[Offer]:
    seen: set[tuple[Any, ...]] = set()
    unique: list[Offer] = []
    for offer in offers:
        key = (offer.provider, offer.instance_type, offer.region, offer.zone, offer.gpu, offer.gpu_count,
               offer.price_per_hour, offer.spot_price_per_hour)
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


def import_catalog_dir(folder: Path | str, *, source: str | None = None, snapshot_date: str | None = None,
                       clouds: list[str] | None = None) -> ImportResult:
    """Import every cloud's CSV in a SkyPilot-format catalog folder (both layouts), de-duplicating exact repeats."""
    folder = Path(folder).expanduser()
    files = discover_catalog_files(folder)
    if clouds:
        files = {c: p for c, p in files.items() if c in {x.lower() for x in clouds}}
    if not files:
        raise FileNotFoundError(f"no <cloud>.csv or <cloud>/vms.csv files in {folder}")
    if snapshot_date is None:
        snapshot_date = read_source_date(folder) or _newest_mtime(files.values())
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
    return result


def _newest_mtime(paths: Any) -> str:
    newest = max(Path(p).stat().st_mtime for p in paths)
    return datetime.fromtimestamp(newest, tz=timezone.utc).date().isoformat()


def today() -> str:
    return date.today().isoformat()
