"""Catalog importer on the real SkyPilot v7 files, bad input, the SQLite database and query_offers."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from tests.shared_data import SHARED, needs_shared_catalog, shared_path
from tools.catalog.importers.skypilot import (
    RowError,
    discover_catalog_files,
    import_catalog_dir,
    import_cloud_file,
    parse_gpu_info,
)
from tools.catalog.query import (
    SNAPSHOT_FILE,
    NotACatalogError,
    Offer,
    build_db,
    build_from_catalog_dir,
    build_from_snapshot,
    default_db_path,
    ensure_db,
    query_offers,
    read_meta,
    read_snapshot,
)
from tools.providers.records import get_provider, inter_node_fabric

REPO = Path(__file__).resolve().parents[1]
SKY = SHARED / "data" / "skypilot-catalog-v7"
needs_shared = needs_shared_catalog

EXPECTED_COUNTS = {
    "aws": 1377,
    "cudo": 195,
    "gcp": 620,
    "hyperbolic": 37,
    "lambda": 306,
    "mithril": 8,
    "nebius": 21,
    "primeintellect": 430,
    "runpod": 1986,
    "seeweb": 27,
    "shadeform": 244,
    "simplepod": 52,
    "vast": 61,
}


@pytest.fixture(scope="module")
def imported():
    return import_catalog_dir(shared_path("data", "skypilot-catalog-v7"))


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("catalog") / "catalog.sqlite"
    return build_from_snapshot(path)


def _find(offers, **fields):
    return [o for o in offers if all(getattr(o, k) == v for k, v in fields.items())]


# ------------------------------------------------------------------------------------------------ the real files


@needs_shared
def test_every_file_imports_with_expected_counts(imported) -> None:
    assert set(discover_catalog_files(SKY)) == set(EXPECTED_COUNTS)
    assert imported.counts == EXPECTED_COUNTS
    assert len(imported.offers) == sum(EXPECTED_COUNTS.values())
    assert imported.snapshot_date == "2026-11-29"  # from SOURCE.md
    # the only skipped rows: 3 aws p5e rows with neither an on-demand nor a spot price
    assert [(i.file, i.line) for i in imported.issues] == [
        ("skypilot-catalog-v7/aws.csv", n) for n in (1361, 1363, 1364)
    ]
    assert all("no on-demand and no spot price" in i.message for i in imported.issues)


@needs_shared
def test_spot_sentinels_become_null(imported) -> None:
    vast = _find(imported.offers, provider="vast")
    assert vast and all(o.spot_price_per_hour is None for o in vast)  # 0.00 = no spot
    prime = _find(imported.offers, provider="primeintellect")
    assert prime and all(o.spot_price_per_hour is None for o in prime)  # 99999999 placeholder
    assert all(o.spot_price_per_hour is None for o in _find(imported.offers, provider="lambda"))
    runpod = _find(imported.offers, provider="runpod", instance_type="1x_A100-80GB_SECURE", zone="CA-MTL-1")
    assert runpod[0].price_per_hour == 1.64 and runpod[0].spot_price_per_hour == 1.19
    aws_p5e = _find(imported.offers, provider="aws", instance_type="p5e.48xlarge")
    assert aws_p5e and all(o.price_per_hour is None and o.spot_price_per_hour for o in aws_p5e)
    for offer in imported.offers:
        for price in (offer.price_per_hour, offer.spot_price_per_hour):
            assert price is None or 0 < price < 1000


@needs_shared
def test_gpu_memory_right_per_cloud(imported) -> None:
    offers = imported.offers

    def one(**fields) -> Offer:
        found = _find(offers, **fields)
        assert found, fields
        return found[0]

    # lambda: TotalGpuMemoryInMiB is per GPU even for 8x; A100 40 GB
    assert one(provider="lambda", instance_type="gpu_8x_a100").gpu == "A100-40GB"
    assert one(provider="lambda", instance_type="gpu_8x_a100_80gb_sxm4").vram_gib_per_gpu == 80
    # vast: SizeInMiB is the sum over GPUs -> 2x A100 with 81920 MiB is the 40 GB card
    vast_a100 = [o for o in _find(offers, provider="vast") if o.gpu.startswith("A100")]
    assert {o.gpu for o in vast_a100} == {"A100-40GB"}
    nvl = one(provider="vast", instance_type="2x-H100_NVL-32-65536")
    assert (nvl.gpu, nvl.gpu_form_factor) == ("H100", "NVL") and nvl.vram_gib_per_gpu == pytest.approx(93.58)
    sxm = one(provider="vast", instance_type="8x-H100_SXM-32-65536")
    assert sxm.vram_gib_per_gpu == pytest.approx(79.65) and sxm.interconnect == "nvlink" and sxm.nvlink_gbs == 450
    # primeintellect: SizeInMiB = count x per-GPU memory
    prime_80 = [o for o in _find(offers, provider="primeintellect", accelerator_name="A100") if o.gpu_count >= 2]
    assert prime_80 and all(o.vram_gib_per_gpu in (40, 80) for o in prime_80)
    assert "A100-80GB" in {o.gpu for o in prime_80}
    # cudo: per GPU; its A100 rows are 80 GB cards, its 96256 MiB H100 is the NVL
    assert {o.gpu for o in _find(offers, provider="cudo", accelerator_name="A100")} == {"A100-80GB"}
    assert {o.gpu_form_factor for o in offers if o.provider == "cudo" and "h100-nvl" in o.instance_type} == {"NVL"}
    # nebius: SizeInMiB is host RAM (204800) -> ignored, H100 memory from the spec table
    assert one(provider="nebius", gpu="H100").vram_gib_per_gpu == pytest.approx(79.65)
    # aws: p3dn is V100 32 GB; A10G from the EC2 API figure; p4de is A100 80 GB SXM
    assert one(provider="aws", instance_type="p3dn.24xlarge").gpu == "V100-32GB"
    assert one(provider="aws", gpu="A10G").vram_gib_per_gpu == pytest.approx(22.35)
    p4de = one(provider="aws", instance_type="p4de.24xlarge")
    assert (p4de.gpu, p4de.gpu_form_factor, p4de.interconnect) == ("A100-80GB", "SXM", "nvlink")
    # runpod: names carry no memory; from the spec table
    assert one(provider="runpod", gpu="MI300X").vram_gib_per_gpu == 192
    # hyperbolic's driver name 'NVIDIA-H100-80GB-HBM3' is the SXM card
    assert one(provider="hyperbolic", instance_type="8x-H100-224-2165").gpu_form_factor == "SXM"
    # every known GPU has memory, except the A16 (no source)
    assert {o.gpu for o in offers if o.vram_gib_per_gpu is None} <= {"A16"}


@needs_shared
def test_gcp_host_plus_accelerator_pricing(imported) -> None:
    a2 = _find(imported.offers, provider="gcp", instance_type="a2-highgpu-1g", zone="us-central1-a")
    assert len(a2) == 1
    assert a2[0].gpu == "A100-40GB" and a2[0].gpu_count == 1 and a2[0].vcpus == 12
    assert a2[0].price_per_hour == pytest.approx(0.73948 + 2.93391)
    assert a2[0].spot_price_per_hour == pytest.approx(0.29576 + 1.1472)
    g2 = _find(imported.offers, provider="gcp", instance_type="g2-standard-4", zone="us-central1-a")
    assert g2[0].gpu == "L4" and g2[0].price_per_hour == pytest.approx(0.70683)
    assert g2[0].spot_price_per_hour == pytest.approx(0.28184)
    assert {o.gpu_count for o in _find(imported.offers, provider="gcp", instance_type="g2-standard-96")} == {8}
    mega = _find(imported.offers, provider="gcp", instance_type="a3-megagpu-8g")
    assert mega and all(o.inter_node_fabric and "TCPXO" in o.inter_node_fabric for o in mega)
    assert all(o.gpu_form_factor == "SXM" for o in _find(imported.offers, provider="gcp", gpu="H100"))
    assert any("n1 hosts" in note for note in imported.notes)


@needs_shared
def test_aggregators_name_their_upstream(imported) -> None:
    shade = _find(imported.offers, provider="shadeform")
    assert all(o.upstream_provider for o in shade)
    assert "excesssupply" in {o.upstream_provider for o in shade}


@needs_shared
def test_shipped_snapshot_matches_importer(imported) -> None:
    header, offers = read_snapshot(SNAPSHOT_FILE)
    assert header["snapshot_date"] == "2026-11-29"
    assert "skypilot-catalog" in header["source"]
    assert header["counts"] == EXPECTED_COUNTS
    assert len(offers) == len(imported.offers)
    assert {(o.provider, o.instance_type, o.zone, o.price_per_hour) for o in offers} == {
        (o.provider, o.instance_type, o.zone, o.price_per_hour) for o in imported.offers
    }


# ------------------------------------------------------------------------------------------------ bad input

HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region\n"
GOOD = (
    "1x-good,H100,1,8,32,\"{'Gpus': [{'Name': 'H100', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 81559}}], "
    "'TotalGpuMemoryInMiB': 81559}\",2.00,1.00,us\n"
)


def test_bad_rows_are_reported_with_file_and_line_and_skipped(tmp_path: Path) -> None:
    canary = tmp_path / "pwned"
    lines = [
        HEADER,  # line 1
        GOOD,  # line 2
        "1x-corrupt,H100,1,8\n",  # line 3: too few fields
        GOOD.replace("2.00,1.00", "-2.00,1.00"),  # line 4: negative price
        GOOD.replace("2.00,1.00", "2.00,-1"),  # line 5: negative spot price
        f"1x-code,H100,1,8,32,\"__import__('os').system('touch {canary}')\",2.0,,us\n",  # line 6: code
        f"1x-code2,H100,1,8,32,\"{{'Gpus': __import__('os').system('touch {canary}')}}\",2.0,,us\n",  # 7
        "1x-count,H100,one,8,32,,2.0,,us\n",  # line 8: bad count
        "1x-nan,H100,1,8,32,,nan,,us\n",  # line 9: NaN price
        "1x-extra,H100,1,8,32,,2.0,,us,extra\n",  # line 10: too many fields
        GOOD.replace("1x-good", "1x-good2"),  # line 11
    ]
    path = tmp_path / "vast.csv"
    path.write_text("".join(lines))
    result = import_cloud_file(path, "vast", snapshot_date="2026-01-01")
    assert [o.instance_type for o in result.offers] == ["1x-good", "1x-good2"]
    issues = {i.line: i.message for i in result.issues}
    assert set(issues) == {3, 4, 5, 6, 7, 8, 9, 10}
    assert "corrupt CSV line" in issues[3] and "corrupt CSV line" in issues[10]
    assert "negative" in issues[4] and "Price" in issues[4] and "SpotPrice" in issues[5]
    assert "GpuInfo" in issues[6] and "GpuInfo" in issues[7]
    assert all(i.file == "vast.csv" for i in result.issues)
    assert str(result.issues[0]).startswith("vast.csv:3: ")
    assert not canary.exists()  # never executed


def test_multiline_quoted_record_reports_its_first_line(tmp_path: Path) -> None:
    path = tmp_path / "lambda.csv"
    path.write_text(HEADER + GOOD + "1x-ml,H100,1,8,32,\"{'Gpus':\n[1]}\",-1,,us\n" + GOOD)
    result = import_cloud_file(path, "lambda", snapshot_date="2026-01-01")
    assert [i.line for i in result.issues] == [3]
    assert len(result.offers) == 2


def test_missing_columns_skip_the_file(tmp_path: Path) -> None:
    path = tmp_path / "aws.csv"
    path.write_text("Name,Cost\nx,1\n")
    result = import_cloud_file(path, "aws", snapshot_date="2026-01-01")
    assert not result.offers and result.issues[0].line == 1 and "missing column" in result.issues[0].message


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os')",
        "{'a': (lambda: 1)()}",
        "{'a': open('/etc/passwd')}",
        "[1, 2]",
        "{" * 5000,
        "{'Gpus': [{'MemoryInfo': {'SizeInMiB': 1}}]} + 1",
    ],
)
def test_gpu_info_never_evaluates(text: str) -> None:
    with pytest.raises(RowError):
        parse_gpu_info(text)


def test_gpu_info_forms() -> None:
    assert parse_gpu_info("A100-80GB") == "A100-80GB"
    assert parse_gpu_info('{"Gpus":[{"Name":"A100"}]}')["Gpus"][0]["Name"] == "A100"
    assert parse_gpu_info("{'Gpus': [{'Name': 'A100'}]}")["Gpus"][0]["Name"] == "A100"
    assert parse_gpu_info("") is None


def test_skypilot_cache_layout(tmp_path: Path) -> None:
    (tmp_path / "lambda").mkdir()
    (tmp_path / "lambda" / "vms.csv").write_text(HEADER + GOOD)
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "vms.csv").write_text(HEADER)
    result = import_catalog_dir(tmp_path)
    assert result.counts == {"lambda": 1}
    assert result.offers[0].source == "lambda/vms.csv:2"


# ------------------------------------------------------------------------------------------------ database + query


def test_query_filters(db: Path) -> None:
    everything = query_offers(db)
    assert len(everything) == read_meta(db)["offer_count"]
    big = query_offers(db, min_vram_gib=70)
    assert big and all(o.vram_gib_per_gpu >= 70 for o in big)
    a100 = query_offers(db, gpu="a100")
    assert {o.gpu for o in a100} == {"A100-40GB", "A100-80GB"}
    assert {o.gpu for o in query_offers(db, gpu="A100 80GB")} == {"A100-80GB"}
    h100_sxm = query_offers(db, gpu="H100-SXM")
    assert h100_sxm and {(o.gpu, o.gpu_form_factor) for o in h100_sxm} == {("H100", "SXM")}
    eight = query_offers(db, gpu="h100", gpu_count=8)
    assert eight and all(o.gpu_count == 8 for o in eight)
    assert all(o.gpu_count >= 4 for o in query_offers(db, min_gpu_count=4))
    assert {o.provider for o in query_offers(db, provider="Lambda Labs")} == {"lambda"}
    assert {o.provider for o in query_offers(db, providers=["aws", "gcp"])} == {"aws", "gcp"}
    assert {o.region for o in query_offers(db, region="US-EAST-1")} == {"us-east-1"}
    assert {o.zone for o in query_offers(db, region="us-central1-a")} == {"us-central1-a"}
    spot = query_offers(db, spot_only=True, max_price=1.0)
    assert spot and all(o.spot_price_per_hour is not None and o.spot_price_per_hour <= 1.0 for o in spot)
    cheap = query_offers(db, max_price=0.5)
    assert cheap and all(o.price_per_hour <= 0.5 for o in cheap)
    nvlink = query_offers(db, interconnect="nvlink")
    assert nvlink and all(o.interconnect == "nvlink" and o.gpu_count > 1 and o.nvlink_gbs for o in nvlink)
    assert all(o.interconnect == "none" for o in query_offers(db, gpu_count=1, limit=50))
    assert query_offers(db, gpu="no-such-gpu") == []
    assert len(query_offers(db, limit=7)) == 7


def test_query_sorting(db: Path) -> None:
    by_price = query_offers(db, min_vram_gib=40)
    prices = [o.price_per_hour for o in by_price if o.price_per_hour is not None]
    assert prices == sorted(prices)
    assert all(o.price_per_hour is None for o in by_price[len(prices) :])  # no on-demand price: last
    spot = [o.spot_price_per_hour for o in query_offers(db, spot_only=True, sort="spot_price")]
    assert spot == sorted(spot)
    per_gpu = [
        o.price_per_gpu_hour
        for o in query_offers(db, gpu="H100", sort="price_per_gpu")
        if o.price_per_gpu_hour is not None
    ]
    assert per_gpu == sorted(per_gpu)
    vram = [o.vram_gib_per_gpu for o in query_offers(db, sort="vram", limit=100)]
    assert vram == sorted(vram, reverse=True) and vram[0] == 192
    with pytest.raises(ValueError):
        query_offers(db, sort="price; DROP TABLE offers")


def test_query_is_parameterised(db: Path) -> None:
    hostile = "x' OR '1'='1"
    assert query_offers(db, gpu=hostile) == []
    assert query_offers(db, provider=hostile) == []
    assert query_offers(db, region="'; DROP TABLE offers; --") == []
    assert query_offers(db, interconnect="nvlink' OR 1=1 --") == []
    assert query_offers(db, limit=1)  # table still there


def test_indexes_used(db: Path) -> None:
    conn = sqlite3.connect(db)
    names = {row[1] for row in conn.execute("PRAGMA index_list(offers)")}
    plan = " ".join(
        str(r)
        for r in conn.execute(
            "EXPLAIN QUERY PLAN SELECT * FROM offers WHERE gpu_lc = ? AND gpu_count = ? ORDER BY price_per_hour",
            ("h100", 8),
        )
    )
    conn.close()
    assert len(names) >= 8
    assert "USING INDEX" in plan


def test_build_is_atomic(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    build_from_snapshot(path)
    before = path.read_bytes()

    def broken():
        _, offers = read_snapshot()
        yield from offers[:10]
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        build_db(path, broken(), {"source": "test"})
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["c.sqlite"]  # no temp file left behind


def test_default_paths_and_ensure_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPU_ADVISOR_DB", raising=False)
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path / "home"))
    assert default_db_path() == tmp_path / "home" / "catalog.sqlite"
    monkeypatch.setenv("GPU_ADVISOR_DB", str(tmp_path / "x.sqlite"))
    assert default_db_path() == tmp_path / "x.sqlite"
    path = ensure_db()
    assert path == tmp_path / "x.sqlite" and read_meta(path)["built_from"] == "snapshot"
    stamp = os.stat(path).st_mtime_ns
    assert ensure_db() == path and os.stat(path).st_mtime_ns == stamp  # not rebuilt
    assert query_offers(limit=1)  # default path, built on first use
    path.write_bytes(b"not a database")
    with pytest.raises(NotACatalogError, match="not a gpu-advisor catalog"):
        ensure_db()
    assert path.read_bytes() == b"not a database"  # a file that is not ours is never replaced


@needs_shared
def test_ensure_db_keeps_a_user_built_catalog(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    build_from_catalog_dir(SKY, path)
    stamp = os.stat(path).st_mtime_ns
    assert ensure_db(path) == path and os.stat(path).st_mtime_ns == stamp
    assert read_meta(path)["built_from"] == str(SKY)


def test_providers() -> None:
    aws = get_provider("AWS")
    assert aws.billing_granularity_s == 1 and aws.billing_minimum_s == 60 and aws.spot_notice_s == 120
    assert aws.source_of("spot_notice_s")
    assert get_provider("gcp").spot_notice_s == 30
    assert get_provider("runpod").spot_notice_s == 5
    lam = get_provider("lambda")
    assert lam.spot_available is False and lam.egress_usd_per_gb == 0 and lam.can_stop is False
    assert get_provider("azure").billing_minimum_s is None  # 5-minute minimum unverified
    assert get_provider("vast").spot_notice_s is None  # not documented
    assert get_provider("cudo").billing_granularity_s is None
    assert get_provider("nowhere") is None
    assert inter_node_fabric("aws", "p5.48xlarge").per_gpu_gbs == 50
    assert inter_node_fabric("aws", "p5en.48xlarge").fabric.startswith("EFA v3")
    assert inter_node_fabric("aws", "g5.48xlarge") is None
    assert inter_node_fabric("azure", "Standard_ND96isr_H100_v5").node_gbps == 3200
    assert aws.billed_seconds(10) == 60 and aws.billed_seconds(61.2) == 62
    assert get_provider("lambda").billed_seconds(61) == 120
    for info in [get_provider(p) for p in ("aws", "gcp", "azure", "lambda", "runpod", "vast")]:
        for name in ("billing_granularity_s", "spot_notice_s", "egress_usd_per_gb"):
            if getattr(info, name) is not None:
                assert info.source_of(name), (info.id, name)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"min_vram_gib": 70},
        {"min_vram_gib": 40, "sort": "spot_price", "spot_only": True},
        {"min_vram_gib": 20, "sort": "price_per_gpu", "provider": "runpod"},
        {"min_vram_gib": 24, "region": "us-east-1"},
        {"min_vram_gib": 80, "gpu": "H100", "sort": "spot_price_per_gpu"},
        {"sort": "vram"},
        {"sort": "gpu_count"},
        {"min_vram_gib": 500},
        {"interconnect": "pcie", "min_gpu_count": 2, "max_price": 5},
    ],
)
def test_limited_query_is_a_prefix_of_the_full_one(db: Path, kwargs) -> None:
    full = query_offers(db, **kwargs)
    for limit in (0, 1, 7, 25):
        assert query_offers(db, **kwargs, limit=limit) == full[:limit]


def test_a_catalog_built_from_another_version_of_the_snapshot_is_rebuilt(tmp_path: Path) -> None:
    """Same snapshot date, different rows (a fixed import): the catalog built from the old snapshot is rebuilt,
    because nothing the user made is lost (it came from the shipped snapshot)."""
    import gzip as gz

    from tools.catalog.paths import SNAPSHOT_FILE
    from tools.catalog.snapshot import build_from_snapshot, snapshot_fingerprint

    older = tmp_path / "older.jsonl.gz"
    lines = gz.decompress(SNAPSHOT_FILE.read_bytes()).decode("utf-8").splitlines(keepends=True)
    older.write_bytes(gz.compress("".join(lines[:-1]).encode("utf-8")))  # one offer fewer, same header and date
    path = tmp_path / "catalog.sqlite"
    build_from_snapshot(path, older)
    assert read_meta(path)["offer_count"] == len(lines) - 2
    assert read_meta(path)["snapshot_fingerprint"] == snapshot_fingerprint(older) != snapshot_fingerprint()
    ensure_db(path)
    assert read_meta(path)["snapshot_fingerprint"] == snapshot_fingerprint()
    assert read_meta(path)["offer_count"] == len(lines) - 1  # every offer of the shipped snapshot (minus its header)
