"""The SkyPilot-format importer (tools/catalog/importers/skypilot.py and tools/catalog/importers/): GPU memory, form factor and the
interconnect each offer is modelled with, from real CSV files written to tmp_path and the shared v7 snapshot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.shared_data import SHARED, needs_shared_catalog
from tools.catalog.importers.skypilot import import_catalog_dir, import_cloud_file
from tools.catalog.offer import Offer
from tools.catalog.query import read_snapshot

SKY = SHARED / "data" / "skypilot-catalog-v7"
needs_shared = needs_shared_catalog  # fails under CI, skips elsewhere, when SKY is missing (tests/conftest.py)

CUDO_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice\n"
VAST_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region\n"


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _one(path: Path, cloud: str) -> list[Offer]:
    result = import_cloud_file(path, cloud, snapshot_date="2026-11-29")
    assert result.issues == []
    return result.offers


def test_pci_in_the_instance_name_is_pcie(tmp_path: Path) -> None:
    """cudo 'intel-ice-lake-a100-pci_8x...' is a PCIe A100: the matcher missed 'pci' and modelled it as NVLink."""
    path = _write(
        tmp_path,
        "cudo.csv",
        CUDO_HEADER
        + (
            "intel-ice-lake-a100-pci_8x64v128gb,A100,8,64,128,10.0,se-smedjebacken-1,"
            "\"{'Gpus': [{'Name': 'A100', 'Count': 8, 'MemoryInfo': {'SizeInMiB': 81920}}]}\",\n"
        ),
    )
    (offer,) = _one(path, "cudo")
    assert (offer.gpu, offer.gpu_form_factor, offer.interconnect) == ("A100-80GB", "PCIe", "pcie")
    assert offer.interconnect_assumed is False  # the name says PCIe: stated, not assumed


def test_unknown_form_factor_is_assumed_pcie_and_says_so(tmp_path: Path) -> None:
    """A multi-GPU offer whose form factor nothing states is modelled as PCIe (the conservative case), flagged."""
    path = _write(
        tmp_path,
        "cudo.csv",
        CUDO_HEADER
        + (
            "intel-broadwell-v100_4x32v64gb,V100,4,32,64,3.0,no-luster-1,"
            "\"{'Gpus': [{'Name': 'V100', 'Count': 4, 'MemoryInfo': {'SizeInMiB': 16384}}]}\",\n"
            "intel-broadwell-v100_1x4v8gb,V100,1,4,8,0.8,no-luster-1,"
            "\"{'Gpus': [{'Name': 'V100', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 16384}}]}\",\n"
        ),
    )
    multi, single = _one(path, "cudo")
    assert multi.gpu_form_factor is None  # still unknown: the form factor is not invented
    assert (multi.interconnect, multi.nvlink_gbs, multi.interconnect_assumed) == ("pcie", None, True)
    assert (single.interconnect, single.interconnect_assumed) == ("none", False)


def test_two_bridge_cards_are_assumed_pcie(tmp_path: Path) -> None:
    """Two A6000s may or may not carry an NVLink bridge; the catalog does not say, so PCIe is assumed."""
    path = _write(
        tmp_path,
        "cudo.csv",
        CUDO_HEADER
        + (
            "intel-ice-lake-rtx-a6000_2x8v16gb,A6000,2,8,16,1.6,se-smedjebacken-1,"
            "\"{'Gpus': [{'Name': 'A6000', 'Count': 2, 'MemoryInfo': {'SizeInMiB': 49152}}]}\",\n"
        ),
    )
    (offer,) = _one(path, "cudo")
    assert (offer.interconnect, offer.interconnect_assumed) == ("pcie", True)


def test_sxm_boards_stay_nvlink(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "cudo.csv",
        CUDO_HEADER
        + (
            "epyc-genoa-h100-sxm_8x96v768gb,H100-SXM,8,96,768,20.0,us-newyork-1,"
            "\"{'Gpus': [{'Name': 'H100-SXM', 'Count': 8, 'MemoryInfo': {'SizeInMiB': 81920}}]}\",\n"
        ),
    )
    (offer,) = _one(path, "cudo")
    assert (offer.interconnect, offer.nvlink_gbs, offer.interconnect_assumed) == ("nvlink", 450, False)


def test_mi300x_is_infinity_fabric_not_pcie(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "runpod.csv",
        (
            "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Region,SpotPrice,Price,"
            "AvailabilityZone\n8x_MI300X_SECURE,MI300X,8.0,192.0,2264.0,MI300X,US,,39.92,US-TX-3\n"
        ),
    )
    (offer,) = _one(path, "runpod")
    assert (offer.interconnect, offer.interconnect_assumed) == ("infinity-fabric", False)
    assert offer.spec().fabric_gbs == 448


def test_catalog_memory_wins_when_it_names_another_variant(tmp_path: Path) -> None:
    """vast lists a 2x RTX 4090 with 98280 MiB summed: 48 GB cards (a real variant), not the 24 GB of the table."""
    path = _write(
        tmp_path,
        "vast.csv",
        VAST_HEADER
        + (
            "2x-RTX_4090-32-65536,RTX4090,2,32,64.0,\"{'Gpus': [{'Name': 'RTX4090', 'Count': 2, 'MemoryInfo': "
            "{'SizeInMiB': 98280}}], 'TotalGpuMemoryInMiB': 98280}\",0.80,0.00,\"Hong Kong, HK, AS\"\n"
            "2x-RTX_4090-32-65536,RTX4090,2,32,64.0,\"{'Gpus': [{'Name': 'RTX4090', 'Count': 2, 'MemoryInfo': "
            "{'SizeInMiB': 49128}}], 'TotalGpuMemoryInMiB': 49128}\",0.80,0.00,\"Texas, US, NA\"\n"
        ),
    )
    big, normal = _one(path, "vast")
    assert big.vram_gib_per_gpu == pytest.approx(98280 / 2 / 1024, abs=0.01)
    assert normal.vram_gib_per_gpu == pytest.approx(23.99)
    assert big.gpu == normal.gpu == "RTX4090"


def test_a16_and_t4_memory(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "shadeform.csv",
        CUDO_HEADER.replace("Price,Region,GpuInfo,SpotPrice", "Price,Region,GpuInfo,SpotPrice")
        + ("vultr_A16x4,A16,4.0,24.0,256,2.05,tokyo-japan-2,\"{'Gpus': [{'Name': 'A16', 'Count': 4.0}]}\",\n"),
    )
    (a16,) = _one(path, "shadeform")
    assert a16.vram_gib_per_gpu == 16 and a16.interconnect == "pcie"
    aws = _write(
        tmp_path,
        "aws.csv",
        (
            "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,"
            "AvailabilityZone\ng4dn.xlarge,T4,1.0,4.0,16.0,\"{'Gpus': [{'Name': 'T4', 'Manufacturer': 'NVIDIA', "
            "'Count': 1, 'MemoryInfo': {'SizeInMiB': 16384}}], 'TotalGpuMemoryInMiB': 16384}\",0.526,0.2,us-east-1,"
            "use1-az1\n"
        ),
    )
    (t4,) = _one(aws, "aws")
    assert t4.vram_gib_per_gpu == 15  # usable (driver) memory, not the marketed 16 GB the AWS API reports


def test_old_snapshot_rows_still_load() -> None:
    """Rows written before the interconnect/price-trust fields existed load with the defaults."""
    row = {
        "provider": "aws",
        "instance_type": "g5.xlarge",
        "gpu": "A10G",
        "gpu_count": 1,
        "interconnect": "none",
        "source": "aws.csv:2",
        "snapshot_date": "2026-11-29",
        "price_per_hour": 1.0,
    }
    offer = Offer.model_validate_json(json.dumps(row))
    assert offer.interconnect_assumed is False and offer.on_demand_is_market is False
    assert offer.price_outlier is None and offer.peer_median_price is None


@needs_shared
def test_shared_catalog_interconnects() -> None:
    """In the real v7 catalog: no multi-GPU offer is left 'unknown' (it reads as NVLink downstream), every cudo
    a100-pci offer is PCIe, and every offer whose form factor is unknown is flagged as assumed."""
    offers = import_catalog_dir(SKY).offers
    multi = [o for o in offers if o.gpu_count > 1]
    assert all(o.interconnect in {"nvlink", "pcie", "infinity-fabric"} for o in multi)
    cudo_pci = [o for o in offers if o.provider == "cudo" and "-pci_" in o.instance_type and o.gpu_count > 1]
    assert cudo_pci and all(o.interconnect == "pcie" and o.gpu_form_factor == "PCIe" for o in cudo_pci)
    unknown_form = [o for o in multi if o.gpu_form_factor is None]
    assert unknown_form and all(o.interconnect == "pcie" and o.interconnect_assumed for o in unknown_form)
    assert not any(o.interconnect_assumed for o in offers if o.gpu_count == 1)


@needs_shared
def test_shipped_snapshot_is_the_fixed_import() -> None:
    """The shipped snapshot was rebuilt with this importer: same offers as a fresh import of the shared folder."""
    _, shipped = read_snapshot()
    fresh = import_catalog_dir(SKY).offers
    assert len(shipped) == len(fresh)
    assert [o.model_dump() for o in shipped] == [o.model_dump() for o in fresh]


def test_placeholder_regions_are_read_as_unknown(tmp_path):
    """'UNSPECIFIED' (primeintellect) and 'default' (hyperbolic) are not regions: the offer has none."""
    from tests.shared_data import shared_path
    from tools.catalog.importers.skypilot import import_cloud_file

    folder = shared_path("data", "skypilot-catalog-v7")
    for cloud in ("primeintellect", "hyperbolic"):
        result = import_cloud_file(folder / f"{cloud}.csv", cloud, snapshot_date="2026-11-29")
        assert result.offers and all(
            o.region is None or o.region.lower() not in ("unspecified", "default") for o in result.offers
        )
        assert any(o.region is None for o in result.offers)
