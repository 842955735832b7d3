"""The advice eval's optional checks (layout, hours, on_demand_shown) read the turn as an expert would."""

from __future__ import annotations

from pathlib import Path

from evals.advice.runner import SETS, check_row, layout_ok, load_requests, on_demand_shown


def offer_from_row(**fields: object) -> dict[str, object]:
    """A turn offer with the fields the checks read."""
    base: dict[str, object] = {
        "provider": "aws",
        "instance_type": "p5.48xlarge",
        "gpu": "H100",
        "total_gpus": 8,
        "nodes": 1,
        "vram_gib_per_gpu": 79.65,
        "spot": False,
        "on_demand_is_market": False,
        "est_hours": 10.0,
        "est_cost": 100.0,
        "layout": "fsdp",
        "meets_budget": None,
        "meets_deadline": None,
    }
    return base | fields


def test_layout_accepts_listed_layouts_and_hsdp_as_fsdp() -> None:
    """HSDP is FSDP sharded inside a node: an expectation naming fsdp accepts it; tensor parallel is not fsdp."""
    assert layout_ok(offer_from_row(layout="hsdp"), ["fsdp"])
    assert not layout_ok(offer_from_row(layout="tensor_parallel"), ["fsdp", "zero2", "ddp"])
    assert layout_ok(offer_from_row(layout=None, total_gpus=1), ["single_gpu"])


def test_on_demand_shown_needs_an_on_demand_plan_within_limits() -> None:
    """A spot headline needs an on-demand plan that misses neither limit; a market price is not on-demand."""
    spot = offer_from_row(spot=True)
    late = offer_from_row(meets_deadline=False)
    market = offer_from_row(on_demand_is_market=True, provider="mithril")
    assert on_demand_shown({"offers": [spot, late, market], "alternatives": {}}) is False
    assert on_demand_shown({"offers": [spot], "alternatives": {"on_demand": offer_from_row(meets_budget=True)}}) is True
    assert on_demand_shown({"offers": [offer_from_row()], "alternatives": {}}) is None


def test_hours_and_optional_checks_only_where_stated(tmp_path: Path) -> None:
    """hours is a closed range on the headline's est_hours; unstated checks are not added."""
    row = {"expect": {"feasible": True, "hours": [5, 10], "layout": ["fsdp"]}}
    checks = check_row(row, {"offers": [offer_from_row(est_hours=10.0)], "answer": ""}, tmp_path / "none.sqlite")
    assert checks == {"feasible": True, "no_zero_hours": True, "hardware": True, "layout": True, "hours": True}
    checks = check_row(row, {"offers": [offer_from_row(est_hours=10.5)], "answer": ""}, tmp_path / "none.sqlite")
    assert checks["hours"] is False and "on_demand_shown" not in checks


def test_sets_are_scored_apart() -> None:
    """The original set, the issue-24 blind set and the x3 blind set's two halves are separate files, each of rows
    of its own (a row in two sets would be scored twice; a held-out row in the tune half would be tuned on)."""
    assert {"requests", "x24", "x3", "x3-heldout"} <= set(SETS)
    assert len(set(SETS.values())) == len(SETS)
    ids = [[row["id"] for row in load_requests(name)] for name in SETS]
    assert all(ids) and sum(map(len, ids)) == len({i for rows in ids for i in rows})
    tune, held = ({row["text"] for row in load_requests(name)} for name in ("x3", "x3-heldout"))
    assert len(tune) == len(held) == 21 and not tune & held
