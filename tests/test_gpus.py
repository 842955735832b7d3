"""The GPU spec table: data integrity, forgiving lookup, units."""

from __future__ import annotations

import json

import pytest

from tests.shared_data import SHARED, shared_path
from tools.gpus import (
    DATA_FILE,
    GpuSpec,
    all_gpus,
    canonical_gpu_name,
    gpu_names,
    gpu_variants,
    lookup_gpu,
    parse_gpu_name,
)


@pytest.mark.parametrize(
    ("raw", "name", "form"),
    [
        ("a100 80gb", "A100-80GB", "SXM"),
        ("A100-80G", "A100-80GB", "SXM"),
        ("A100-80GB-SXM", "A100-80GB", "SXM"),
        ("NVIDIA A100-SXM4-80GB", "A100-80GB", "SXM"),
        ("NVIDIA A100 80GB PCIe", "A100-80GB", "PCIe"),
        ("A100", "A100-40GB", "SXM"),
        ("80GB A100", "A100-80GB", "SXM"),
        ("NVIDIA H100 80GB HBM3", "H100", "SXM"),
        ("H100-SXM", "H100", "SXM"),
        ("H100_SXM", "H100", "SXM"),
        ("h100", "H100", "SXM"),
        ("H100-NVL", "H100", "NVL"),
        ("H100 94GB", "H100", "NVL"),
        ("H100 PCIe", "H100", "PCIe"),
        ("H100-MEGA", "H100", "SXM"),
        ("H200-SXM", "H200", "SXM"),
        ("4090", "RTX4090", "PCIe"),
        ("RTX 4090", "RTX4090", "PCIe"),
        ("NVIDIA-GeForce-RTX-4090", "RTX4090", "PCIe"),
        ("rtx3090", "RTX3090", "PCIe"),
        ("A6000", "RTXA6000", "PCIe"),
        ("RTX A6000", "RTXA6000", "PCIe"),
        ("RTX6000-Ada", "RTX6000Ada", "PCIe"),
        ("RTX 6000 Ada Generation", "RTX6000Ada", "PCIe"),
        ("RTX6000", "RTX6000", "PCIe"),
        ("RTX PRO 6000 96GB", "RTXPRO6000", "PCIe"),
        ("V100", "V100-16GB", "SXM"),
        ("V100-32G", "V100-32GB", "SXM"),
        ("Tesla T4", "T4", "PCIe"),
        ("T4g", "T4G", "PCIe"),
        ("l40s", "L40S", "PCIe"),
        ("L40", "L40", "PCIe"),
        ("A10G", "A10G", "PCIe"),
        ("A10", "A10", "PCIe"),
        ("GH200", "GH200", "Superchip"),
        ("b200", "B200", "SXM"),
        ("AMD Instinct MI300X", "MI300X", "OAM"),
    ],
)
def test_lookup_is_forgiving(raw: str, name: str, form: str) -> None:
    spec = lookup_gpu(raw)
    assert spec is not None, raw
    assert (spec.name, spec.form_factor) == (name, form)
    assert canonical_gpu_name(raw) == name


@pytest.mark.parametrize("raw", ["", "   ", "foo", "H1000", "A100000", "RTX 9999", "GH100"])
def test_unknown_names_give_none(raw: str) -> None:
    assert lookup_gpu(raw) is None
    assert canonical_gpu_name(raw) is None


def test_form_factor_argument() -> None:
    assert lookup_gpu("H100", "pcie").form_factor == "PCIe"
    assert lookup_gpu("h100", "NVL").memory_gib == pytest.approx(93.58)
    assert lookup_gpu("A100-80GB", "PCIe").memory_bandwidth_tbs == pytest.approx(1.935)
    assert lookup_gpu("L4", "SXM") is None  # L4 only comes as a PCIe card
    with pytest.raises(ValueError):
        lookup_gpu("H100", "socket")
    assert [s.form_factor for s in gpu_variants("H100")] == ["SXM", "NVL", "PCIe"]


def test_key_figures_from_hardware_md() -> None:
    h100 = lookup_gpu("H100")
    assert h100.bf16_tflops == 989 and h100.fp8 is True
    assert h100.nvlink_gbs == 450  # NVLink4 900 GB/s bidirectional -> 450 each way
    assert h100.pcie_gen == 5 and h100.pcie_gbs == 63
    a100 = lookup_gpu("A100-80GB")
    assert a100.bf16_tflops == 312 and a100.fp8 is False and a100.nvlink_gbs == 300 and a100.pcie_gbs == 31
    assert lookup_gpu("H100 NVL").bf16_tflops == 835.5  # 1671 sparse / 2
    assert lookup_gpu("L4").bf16_tflops == 121 and lookup_gpu("L4").nvlink_gbs is None
    assert lookup_gpu("A40").nvlink_gbs == 56.25 and lookup_gpu("A40").gpu_link == "nvlink-bridge"
    assert lookup_gpu("RTX4090").bf16_tflops == 165.2  # FP32-accumulate rate, the training one
    v100 = lookup_gpu("V100")
    assert v100.bf16_supported is False and v100.bf16_tflops is None and v100.fp16_tflops == 125
    assert v100.training_tflops() == 125
    assert lookup_gpu("B200").nvlink_gbs == 900
    assert lookup_gpu("MI300X").nvlink_gbs is None and lookup_gpu("MI300X").bf16_tflops == 1307
    assert lookup_gpu("MI300X").gpu_link == "infinity-fabric" and lookup_gpu("MI300X").fabric_gbs == 448


def test_not_found_stays_none() -> None:
    assert lookup_gpu("RTX3090").nvlink_gbs is None  # bridge exists, bandwidth not found
    assert lookup_gpu("P4").fp16_tflops is None  # GP104 has no fast FP16 (not an offer: n1 host)


def test_cards_that_had_no_figures() -> None:
    """Issue 10: these GPUs had no TFLOPS (or no memory) and their offers could never be recommended."""
    a10g = lookup_gpu("A10G")
    assert a10g.bf16_tflops == 70 and a10g.memory_gib == pytest.approx(22.35) and a10g.pcie_gbs == 31
    assert lookup_gpu("RTX 6000 Ada").bf16_tflops == pytest.approx(364.2)
    assert lookup_gpu("RTXA5000").bf16_tflops == pytest.approx(111.1)
    assert lookup_gpu("RTX5090").bf16_tflops == pytest.approx(209.5)
    a800 = lookup_gpu("A800")
    assert a800.bf16_tflops == 312 and a800.form_factor == "PCIe" and a800.nvlink_gbs == 200
    assert lookup_gpu("A30").bf16_tflops == 165 and lookup_gpu("A30").memory_bandwidth_tbs == pytest.approx(0.933)
    a16 = lookup_gpu("A16")
    assert a16.memory_gib == 16 and a16.bf16_tflops == pytest.approx(17.4)  # per GPU of the 4-GPU board, dense
    assert lookup_gpu("T4").memory_gib == 15  # driver-reported 15360 MiB, not the marketed 16 GB
    assert lookup_gpu("T4G").fp16_tflops == 65 and lookup_gpu("T4G").bf16_supported is False
    assert lookup_gpu("RTX6000").bf16_tflops is None and lookup_gpu("RTX6000").fp16_tflops == pytest.approx(130.5)


def test_memory_rule() -> None:
    assert lookup_gpu("A100-80GB").memory_gib == 80
    assert lookup_gpu("A100").memory_gib == 40
    assert lookup_gpu("H100").memory_gib == pytest.approx(81559 / 1024, abs=0.01)
    assert lookup_gpu("H200").memory_gib == pytest.approx(143771 / 1024, abs=0.05)
    assert lookup_gpu("RTX4090").memory_gib == pytest.approx(24564 / 1024, abs=0.01)
    assert lookup_gpu("L4").memory_gib == pytest.approx(22888 / 1024, abs=0.01)
    for spec in all_gpus():
        if spec.memory_gib is not None:
            assert spec.memory_rule in {"driver", "cloud-api", "marketed", "catalog"}, spec.key


def test_table_integrity() -> None:
    specs = all_gpus()
    assert len({s.key for s in specs}) == len(specs)
    raw = json.loads(DATA_FILE.read_text())
    fields = set(GpuSpec.__dataclass_fields__)
    for row in raw["gpus"]:
        assert set(row) <= fields, row["name"]
        assert row["source"].strip()
    for spec in specs:
        assert spec.form_factor in {None, "SXM", "PCIe", "NVL", "Superchip", "OAM"}
        if spec.nvlink_gbs is not None:
            assert spec.gpu_link in {"nvlink", "nvlink-bridge"}
        if spec.pcie_gen is not None:
            assert spec.pcie_gbs == {3: 16, 4: 31, 5: 63}[spec.pcie_gen]
        if spec.bf16_supported is False:
            assert spec.bf16_tflops is None
        # every canonical name and alias resolves back to its own model
        for label in (spec.name, *spec.aliases):
            assert canonical_gpu_name(label) == spec.name, label
    assert "H100" in gpu_names() and gpu_names().count("H100") == 1


def test_parse_reports_memory_and_form() -> None:
    parsed = parse_gpu_name("A100-SXM4-80GB")
    assert parsed.name == "A100-80GB" and parsed.form_factor == "SXM" and parsed.memory_gb == 80
    assert parse_gpu_name("H100").form_factor is None


def _catalog_offers():
    """Offers of the shipped snapshot and of a fresh import of shared/data/skypilot-catalog-v7 (when present; under
    CI its absence fails)."""
    import os

    from tools.catalog.importers.skypilot import import_catalog_dir
    from tools.catalog.query import read_snapshot

    _, offers = read_snapshot()
    folder = SHARED / "data" / "skypilot-catalog-v7"
    if folder.is_dir():
        offers = [*offers, *import_catalog_dir(folder).offers]
    elif os.environ.get("CI"):
        pytest.fail(f"required under CI: {folder} is missing (set GPU_ADVISOR_SHARED)", pytrace=False)
    return offers


def test_every_catalog_gpu_has_sourced_specs() -> None:
    """Issue 10: every GPU an offer names has memory, bandwidth, dense training TFLOPS, a GPU link figure and a
    source, so no offer is unrecommendable for want of data."""
    missing: dict[str, list[str]] = {}
    for offer in _catalog_offers():
        spec = offer.spec()
        label = f"{offer.gpu}/{offer.gpu_form_factor}"
        if spec is None:
            missing.setdefault(label, []).append("not in the spec table")
            continue
        gaps = [
            name
            for name, value in (
                ("memory_gib", spec.memory_gib),
                ("memory_bandwidth_tbs", spec.memory_bandwidth_tbs),
                ("training_tflops", spec.training_tflops()),
                ("link (nvlink_gbs, fabric_gbs or pcie_gbs)", spec.nvlink_gbs or spec.fabric_gbs or spec.pcie_gbs),
            )
            if value is None
        ]
        if not spec.source.strip():
            gaps.append("source")
        if offer.vram_gib_per_gpu is None:
            gaps.append("offer vram_gib_per_gpu")
        if gaps:
            missing.setdefault(label, []).extend(g for g in gaps if g not in missing.get(label, []))
    assert missing == {}


def test_every_accelerator_named_in_the_shared_catalog_is_in_the_table() -> None:
    """Every AcceleratorName of shared/data/skypilot-catalog-v7 (offers or not, e.g. GCP's n1-attached P100/P4) has a
    spec row with memory, bandwidth, a link figure and a source; a training rate too, except the P4 (no fast FP16:
    it cannot train in mixed precision, and GCP attaches it to n1 hosts, so it is never an offer here)."""
    import csv

    folder = shared_path("data", "skypilot-catalog-v7")
    names = set()
    for path in folder.glob("*.csv"):
        with open(path, newline="", encoding="utf-8") as handle:
            names |= {(row.get("AcceleratorName") or "").strip() for row in csv.DictReader(handle)}
    names.discard("")
    problems = {}
    for name in sorted(names):
        spec = lookup_gpu(name)
        if spec is None:
            problems[name] = "not in the table"
            continue
        gaps = [
            field
            for field, value in (
                ("memory_gib", spec.memory_gib),
                ("memory_bandwidth_tbs", spec.memory_bandwidth_tbs),
                ("link", spec.nvlink_gbs or spec.fabric_gbs or spec.pcie_gbs),
                ("source", spec.source.strip() or None),
                ("training_tflops", spec.training_tflops() if spec.name != "P4" else 0.0),
            )
            if value is None
        ]
        if gaps:
            problems[name] = gaps
    assert problems == {}
