"""GCP's catalog format: GPU machine types (a2/a3/a4/g2) carry host-only prices and the GPUs are separate rows
without an instance type; an offer is host row + accelerator row of the same zone (``Price`` and ``SpotPrice``
added, SOURCE.md 'How a GCP GPU offer's price is formed'). Accelerators that attach to n1 hosts (T4, V100, P100, P4)
have no fixed shape and are not turned into offers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tools.catalog.importers.common import (
    ImportIssue,
    ImportResult,
    RowError,
    count,
    number,
    parse_gpu_info,
    price,
    rows,
)
from tools.catalog.importers.offer_rows import make_offer
from tools.gpus import parse_gpu_name

GCP_L4_COUNT = {4: 1, 8: 1, 12: 1, 16: 1, 32: 1, 24: 2, 48: 4, 96: 8}
"""g2-standard-N -> L4 count, by GCP's G2 shapes (SOURCE.md 'How a GCP GPU offer's price is formed')."""


def gcp_host_count(instance_type: str, accelerator: str) -> int | None:
    """GPUs that a GCP GPU machine type carries, or None when it is not a shape for that accelerator."""
    canonical = parse_gpu_name(accelerator)
    if canonical is None:
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
        return GCP_L4_COUNT.get(int(match.group(1))) if raw == "L4" else None
    return None


def _parse_row(row: dict[str, str]) -> dict[str, Any]:
    instance_type = (row.get("InstanceType") or "").strip()
    accelerator = (row.get("AcceleratorName") or "").strip()
    parsed: dict[str, Any] = {
        "instance_type": instance_type,
        "accelerator": accelerator,
        "region": (row.get("Region") or "").strip(),
        "zone": (row.get("AvailabilityZone") or "").strip() or None,
        "vcpus": number(row.get("vCPUs"), "vCPUs"),
        "host_ram": number(row.get("MemoryGiB"), "MemoryGiB"),
        "price": price(row.get("Price"), "Price"),
        "spot": price(row.get("SpotPrice"), "SpotPrice"),
    }
    if accelerator:
        parsed["count"] = count(row.get("AcceleratorCount"))
        parsed["info"] = parse_gpu_info(row.get("GpuInfo"))
    return parsed


def import_gcp(path: Path, label: str, snapshot_date: str, result: ImportResult) -> None:
    """Append GCP offers (host + accelerator rows of the same zone); unmatched accelerators become a note."""
    hosts: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    accelerators: list[tuple[int, dict[str, Any]]] = []
    for line, row in rows(path, label, result.issues):
        try:
            parsed = _parse_row(row)
        except RowError as error:
            result.issues.append(ImportIssue(label, line, f"{error}; row skipped"))
            continue
        instance_type, accelerator = parsed["instance_type"], parsed["accelerator"]
        if instance_type and not accelerator:
            if re.match(r"^(a2|a3|a4|g2)-", instance_type):
                hosts.setdefault(parsed["zone"] or parsed["region"], []).append((line, parsed))
        elif accelerator and not instance_type:
            if not accelerator.lower().startswith("tpu"):
                accelerators.append((line, parsed))
        elif accelerator and instance_type:
            # a machine type that carries its accelerator directly: price already complete
            try:
                offer = make_offer(
                    "gcp",
                    label,
                    line,
                    snapshot_date,
                    instance_type=instance_type,
                    accelerator=accelerator,
                    count=parsed["count"],
                    region=parsed["region"],
                    zone=parsed["zone"],
                    vcpus=parsed["vcpus"],
                    host_ram=parsed["host_ram"],
                    price=parsed["price"],
                    spot=parsed["spot"],
                    info=parsed["info"],
                    upstream_id=None,
                )
            except RowError as error:
                result.issues.append(ImportIssue(label, line, f"{error}; row skipped"))
                continue
            result.offers.append(offer)
    _join_hosts(hosts, accelerators, label, snapshot_date, result)


def _join_hosts(
    hosts: dict[str, list[tuple[int, dict[str, Any]]]],
    accelerators: list[tuple[int, dict[str, Any]]],
    label: str,
    snapshot_date: str,
    result: ImportResult,
) -> None:
    unmatched: dict[str, int] = {}
    for line, acc in accelerators:
        matched = False
        for host_line, host in hosts.get(acc["zone"] or acc["region"], []):
            if gcp_host_count(host["instance_type"], acc["accelerator"]) != acc["count"]:
                continue
            matched = True
            total = (host["price"] + acc["price"]) if host["price"] is not None and acc["price"] is not None else None
            spot = (host["spot"] + acc["spot"]) if host["spot"] is not None and acc["spot"] is not None else None
            if total is None and spot is None:
                continue
            offer = make_offer(
                "gcp",
                label,
                line,
                snapshot_date,
                instance_type=host["instance_type"],
                accelerator=acc["accelerator"],
                count=acc["count"],
                region=host["region"],
                zone=host["zone"],
                vcpus=host["vcpus"],
                host_ram=host["host_ram"],
                price=round(total, 6) if total is not None else None,
                spot=round(spot, 6) if spot is not None else None,
                info=acc["info"],
                upstream_id=None,
            )
            result.offers.append(offer.model_copy(update={"source": f"{label}:{host_line}+{line}"}))
        if not matched:
            unmatched[acc["accelerator"]] = unmatched.get(acc["accelerator"], 0) + 1
    if unmatched:
        detail = ", ".join(f"{name} x{n}" for name, n in sorted(unmatched.items()))
        result.notes.append(
            f"{label}: accelerator rows without a host machine type in the file (n1 hosts or "
            f"missing a4 rows), not turned into offers: {detail}"
        )
