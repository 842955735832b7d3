"""One catalog row -> one Offer, and the import of a cloud whose rows are whole offers (every cloud but GCP)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tools.catalog.importers.common import (
    ImportIssue,
    ImportResult,
    RowError,
    count,
    gpu_info_fields,
    number,
    parse_gpu_info,
    price,
    rows,
)
from tools.catalog.importers.gpu_resolution import interconnect_for, resolve_gpu, upstream
from tools.catalog.offer import Offer
from tools.providers import inter_node_fabric

PLACEHOLDER_REGIONS = frozenset({"unspecified", "default"})
"""Region values some catalogs write when the region is not known (primeintellect, hyperbolic): read as none."""


def make_offer(
    cloud: str,
    label: str,
    line: int,
    snapshot_date: str,
    *,
    instance_type: str,
    accelerator: str,
    count: int,
    region: str,
    zone: str | None,
    vcpus: float | None,
    host_ram: float | None,
    price: float | None,
    spot: float | None,
    info: dict[str, Any] | str | None,
    upstream_id: str | None,
) -> Offer:
    """The Offer of one row: GPU resolved from every hint, interconnect (stated or assumed), inter-node fabric."""
    info_name, reported = gpu_info_fields(info)
    resolved = resolve_gpu(
        cloud,
        accelerator,
        instance_type,
        info_name=info_name,
        upstream_id=upstream_id,
        reported_mib=reported,
        gpu_count=count,
    )
    interconnect, nvlink, assumed = interconnect_for(resolved, count)
    fabric = inter_node_fabric(cloud, instance_type)
    return Offer(
        provider=cloud,
        upstream_provider=upstream(cloud, instance_type),
        instance_type=instance_type,
        region=None if (region or "").strip().lower() in PLACEHOLDER_REGIONS else (region or None),
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
        interconnect_assumed=assumed,
        nvlink_gbs=nvlink,
        inter_node_fabric=fabric.fabric if fabric else None,
        inter_node_gbps_per_gpu=fabric.per_gpu_gbps if fabric else None,
        source=f"{label}:{line}",
        snapshot_date=snapshot_date,
    )


def import_offer_rows(path: Path, cloud: str, label: str, snapshot_date: str, result: ImportResult) -> None:
    """Append an Offer per GPU row of a cloud whose rows are complete offers; bad rows become issues."""
    for line, row in rows(path, label, result.issues):
        accelerator = (row.get("AcceleratorName") or "").strip()
        if not accelerator:
            continue  # CPU-only machine type
        try:
            offer = make_offer(
                cloud,
                label,
                line,
                snapshot_date,
                instance_type=row["InstanceType"].strip(),
                accelerator=accelerator,
                count=count(row.get("AcceleratorCount")),
                region=(row.get("Region") or "").strip(),
                zone=(row.get("AvailabilityZone") or "").strip() or None,
                vcpus=number(row.get("vCPUs"), "vCPUs"),
                host_ram=number(row.get("MemoryGiB"), "MemoryGiB"),
                price=price(row.get("Price"), "Price"),
                spot=price(row.get("SpotPrice"), "SpotPrice"),
                info=parse_gpu_info(row.get("GpuInfo")),
                upstream_id=(row.get("UpstreamCloudId") or None),
            )
        except RowError as error:
            result.issues.append(ImportIssue(label, line, f"{error}; row skipped"))
            continue
        if offer.price_per_hour is None and offer.spot_price_per_hour is None:
            result.issues.append(ImportIssue(label, line, "no on-demand and no spot price; row skipped"))
            continue
        result.offers.append(offer)
