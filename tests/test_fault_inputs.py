"""Extreme but valid inputs that used to crash or leak internal messages: a billing interval far below float
precision, a deadline with room for 'infinitely' many preemptions, a job spot never finishes, a tiny generic model,
through the real HTTP API (uvicorn on 127.0.0.1) and the CLI."""

from __future__ import annotations

import math
import os
import sys

import httpx2
import pytest

from cli.app import main
from tests.web_server import serve, test_settings
from tools.catalog.query import build_from_snapshot
from tools.spot.risk import SpotRiskRequest, SpotRiskResult, assess_spot


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory):
    catalog = build_from_snapshot(tmp_path_factory.mktemp("catalog") / "catalog.sqlite")
    with (
        serve(test_settings(tmp_path_factory.mktemp("threads"), catalog)) as running,
        httpx2.Client(base_url=running.url, timeout=60) as http,
    ):
        yield http


def number_or_null_fields() -> set[str]:
    """SpotRiskResult fields whose published schema allows null."""
    properties = SpotRiskResult.model_json_schema(mode="serialization")["properties"]
    return {
        name
        for name, prop in properties.items()
        if {"type": "null"} in prop.get("anyOf", []) or prop.get("type") == "null"
    }


@pytest.mark.parametrize(
    "body",
    [
        {"job_hours": 10, "billing_granularity_s": 1e-300, "spot_price_per_hour": 1, "on_demand_price_per_hour": 2},
        {"job_hours": 10, "billing_granularity_s": 1e-320, "spot_price_per_hour": 1, "on_demand_price_per_hour": 2},
        {
            "job_hours": 10,
            "billing_granularity_s": 5e-324,
            "billing_minimum_s": 600,
            "restart_overhead_s": 0,
            "spot_price_per_hour": 1,
            "on_demand_price_per_hour": 2,
        },
        {
            "job_hours": 6e-05,
            "billing_granularity_s": 67241.9,
            "billing_minimum_s": 2067349.9,
            "deadline_hours": 1.67e305,
            "checkpoint_write_s": 978901.75,
            "preemption_rate_per_hour": 363.1,
            "checkpoint_on_notice": True,
        },
        {
            "job_hours": 1e6,
            "preemption_rate_per_hour": 1000,
            "restart_overhead_s": 1e6,
            "checkpoint_write_s": 1e6,
            "spot_price_per_hour": 1,
            "on_demand_price_per_hour": 2,
            "deadline_hours": 2e6,
        },
    ],
)
def test_spot_extremes_answer_with_the_documented_types(client: httpx2.Client, body: dict) -> None:
    response = client.post("/api/spot", json=body)
    assert response.status_code == 200, response.text
    result = response.json()
    nullable = number_or_null_fields()
    for name, value in result.items():
        if value is None:
            assert name in nullable, f"{name} is null but the schema promises a number"


class LineBudget:
    """A tracer that stops the code under test after `limit` executed lines of tools/spot/: bounded work is
    counted in steps, not seconds (the timing lives in benchmarks/spot_tail.py)."""

    def __init__(self, limit: int) -> None:
        self.limit, self.lines = limit, 0

    def __call__(self, frame, event, arg):
        if os.path.join("tools", "spot", "") not in frame.f_code.co_filename:
            return None
        if event == "line":
            self.lines += 1
            if self.lines > self.limit:
                raise RuntimeError(f"more than {self.limit} lines: a loop over the Poisson terms")
        return self


def test_a_huge_poisson_tail_is_computed_not_looped() -> None:
    budget = LineBudget(20_000)  # summing up to k ~ 1e15 terms would take ~1e15 lines
    sys.settrace(budget)
    try:
        # checkpointing on the provider's notice makes every preemption cost a fixed time, so the deadline odds are
        # a Poisson sum up to k = slack / cost ~ 1.8e15 (without the notice the odds come from a closed form)
        result = assess_spot(
            SpotRiskRequest(
                job_hours=1000,
                preemption_rate_per_hour=0.5,
                checkpoint_write_s=1,
                restart_overhead_s=1,
                deadline_hours=1e12,
                spot_price_per_hour=1,
                on_demand_price_per_hour=2,
                checkpoint_on_notice=True,
                notice_s=120,
            )
        )
    finally:
        sys.settrace(None)
    assert result.checkpoint_on_notice and result.p_spot_done_by_deadline == 1.0 and budget.lines > 0
    assert math.isfinite(result.expected_spot_hours)


def test_a_tiny_generic_model_is_estimated_not_refused(client: httpx2.Client, capsys) -> None:
    response = client.post("/api/estimate", json={"params_b": 0.001, "method": "full_finetune"})
    assert response.status_code == 200, response.text
    code = main(["estimate", "--params-b", "0.001", "--method", "full_finetune", "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and "pipeline parallel" not in err and "layers" not in err
    assert "internal error" not in out + err


def test_spot_cli_with_a_tiny_billing_interval_is_not_an_internal_error(capsys) -> None:
    code = main(
        [
            "spot",
            "--job-hours",
            "10",
            "--billing-granularity-seconds",
            "1e-300",
            "--spot-price",
            "1",
            "--on-demand-price",
            "2",
            "--json",
        ]
    )
    _out, err = capsys.readouterr()
    assert code == 0, err
    assert "internal error" not in err and "OverflowError" not in err


def test_a_subnormal_link_bandwidth_is_refused_not_divided_by(client: httpx2.Client) -> None:
    job = {"language": "en", "method": "full_finetune", "model": "llama-3-8b", "dataset_examples": 1000}
    candidate = {
        "gpu": "H100",
        "gpu_count": 64,
        "gpus_per_node": 1,
        "interconnect": "unknown",  # schemathesis' find
        "nvlink_gbs": 5e-324,
        "inter_node_gbps": 5e-324,
    }
    response = client.post("/api/tools/topology", json={"job": job, "candidate": candidate})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "invalid_input"
