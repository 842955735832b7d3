"""The tool endpoints over a real server, checked against values worked out by hand for a small fixed catalog
(not against the functions the endpoints call)."""

from __future__ import annotations

import math
from pathlib import Path

import httpx2
import pytest

from tests.web_server import serve, test_settings
from tools.catalog.offer import Offer
from tools.catalog.query import build_db

ROWS = [
    # provider, instance, gpu, count, GiB per GPU, on-demand $/h, spot $/h, interconnect
    ("lambda", "gpu_1x_h100_pcie", "H100", 1, 79.6, 2.49, None, "none"),
    ("runpod", "1x_H100_SECURE", "H100", 1, 79.6, 2.99, 1.75, "none"),
    ("aws", "p5.48xlarge", "H100", 8, 79.6, 98.32, 31.46, "nvlink"),
    ("runpod", "1x_L4_SECURE", "L4", 1, 22.0, 0.44, 0.25, "none"),
    ("vast", "1x-RTX4090", "RTX4090", 1, 23.6, 0.35, 0.29, "none"),
]


def fixed_catalog(path: Path) -> Path:
    """A catalog holding exactly ROWS."""
    offers = [
        Offer(
            provider=p,
            instance_type=i,
            region="us-east-1",
            gpu=g,
            gpu_count=n,
            vram_gib_per_gpu=v,
            price_per_hour=od,
            spot_price_per_hour=sp,
            interconnect=link,
            gpu_form_factor="SXM" if link == "nvlink" else "PCIe",
            source=f"test:{k}",
            snapshot_date="2026-11-30",
        )
        for k, (p, i, g, n, v, od, sp, link) in enumerate(ROWS)
    ]
    return build_db(
        path, offers, {"source": "hand-written test rows", "snapshot_date": "2026-11-30"}, create_parent=True
    )


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory):
    """A real server on the fixed catalog."""
    catalog = fixed_catalog(tmp_path_factory.mktemp("fixed") / "catalog.sqlite")
    with (
        serve(test_settings(tmp_path_factory.mktemp("threads"), catalog)) as running,
        httpx2.Client(base_url=running.url, timeout=60) as http,
    ):
        yield http


def test_catalog_endpoint_returns_exactly_the_matching_rows_in_price_order(client):
    """H100 offers by price: the three H100 rows, cheapest instance first; spot under $0.30: only the 4090 and L4."""
    h100 = client.get("/api/catalog", params={"gpu": "H100", "sort": "price", "limit": 10}).json()
    assert [o["instance_type"] for o in h100] == ["gpu_1x_h100_pcie", "1x_H100_SECURE", "p5.48xlarge"]
    assert [o["price_per_hour"] for o in h100] == [2.49, 2.99, 98.32]
    cheap_spot = client.get("/api/catalog", params={"spot_only": True, "max_price": 0.30, "limit": 10}).json()
    assert sorted(o["instance_type"] for o in cheap_spot) == ["1x-RTX4090", "1x_L4_SECURE"]


def test_estimate_endpoint_counts_llama_3_8b_and_its_lora_adapters(client):
    """Llama 3 8B has 8,030,261,248 parameters (published); rank-16 LoRA on all seven projections of its 32 layers
    adds 32 x 16 x [(4096+4096)x2 + (4096+1024)x2 + (4096+14336)x3] = 41,943,040 trainable parameters."""
    body = client.post("/api/estimate", json={"model": "llama-3-8b", "method": "lora", "gpu": "H100"}).json()
    assert body["total_params"] == 8_030_261_248
    assert body["trainable_params"] == 32 * 16 * ((4096 + 4096) * 2 + (4096 + 1024) * 2 + (4096 + 14336) * 3)
    assert body["fit"]["fits"] is True and body["fit"]["vram_gib"] < 80


def test_spot_endpoint_follows_youngs_rule_and_plain_billing(client):
    """10 h at a 0.1/h preemption rate with 60 s checkpoint writes: Young's interval sqrt(2 x 60 s x 10 h), the
    on-demand cost 10 h x $2.20, and the no-preemption spot time 10 h plus one 60 s write per full interval."""
    body = client.post(
        "/api/spot",
        json={
            "job_hours": 10,
            "provider": "runpod",
            "spot_price_per_hour": 1.1,
            "on_demand_price_per_hour": 2.2,
            "preemption_rate_per_hour": 0.1,
        },
    ).json()
    young = math.sqrt(2 * (60 / 3600) * 10)
    assert body["young_interval_hours"] == pytest.approx(young, rel=1e-9)
    assert body["on_demand_cost_usd"] == pytest.approx(22.0)
    interval = body["checkpoint_interval_hours"]
    assert 0 < interval <= young
    writes = math.floor(10 / interval)
    assert body["spot_hours_no_preemption"] == pytest.approx(10 + writes * 60 / 3600, rel=1e-9)
    assert body["expected_spot_cost_usd"] < body["on_demand_cost_usd"] and body["verdict"] == "spot"


def test_rank_endpoint_ranks_only_cards_that_fit_and_bills_by_the_hour_shown(client):
    """LoRA on an 8B model: every ranked offer's per-GPU memory is within its card, on-demand only as asked, and each
    cost is the hourly price times the billed hours; the ranked and excluded offers account for all five rows."""
    spec = {
        "language": "en",
        "method": "lora",
        "model": "llama-3-8b",
        "dataset_tokens": 10_000_000,
        "interruptible_ok": False,
    }
    result = client.post("/api/rank", params={"limit": 10}, json=spec).json()
    offers = result["offers"]
    assert offers
    for offer in offers:
        assert offer["per_gpu_gib"] <= offer["vram_gib_per_gpu"]
        assert offer["est_cost"] == pytest.approx(offer["price_per_hour"] * offer["billed_hours"], rel=1e-6)
        assert offer["spot"] is False
    costs = [o["est_cost"] for o in offers]
    assert costs == sorted(costs)
    full = client.post("/api/rank", json={**spec, "method": "full_finetune", "num_gpus": 1}).json()
    assert full["offers"] == [] and full["binding_limit"] == "memory"  # 8B x 16 B of weights and Adam > 80 GiB
