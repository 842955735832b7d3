"""A micro-batch the user states is what the plan runs: a card that holds it beats a cheaper card that only runs a
smaller one; only when no offer holds the stated micro-batch is a smaller one used, and the plan says so. Raw
catalog rows; the memory figures are the estimator's for Llama 3.2 1B full fine-tuning with checkpointing (about
56 GiB per GPU at micro-batch 8, about 91 GiB at 16: above an H100's 95 % of 79.65 GiB, within an H200's)."""

from __future__ import annotations

from pathlib import Path

from contract.jobspec import JobSpec
from tools.catalog.query import Offer, build_db
from tools.memory.estimator import EstimateRequest, estimate
from tools.ranking.rank import clear_cache, rank_offers


def _card(gpu: str, vram: float, price: float) -> Offer:
    """One GPU of `gpu` on its own instance."""
    return Offer(
        provider="lambda",
        instance_type=f"1x{gpu}",
        region="r1",
        gpu=gpu,
        gpu_count=1,
        vram_gib_per_gpu=vram,
        price_per_hour=price,
        interconnect="none",
        source="test:1",
        snapshot_date="2026-11-29",
    )


def _rank(tmp_path: Path, offers: list[Offer], micro: int | None) -> object:
    """The ranking of a 1B full fine-tuning on 20M tokens, checkpointing on, with `micro` stated (or not)."""
    clear_cache()
    db = build_db(tmp_path / "catalog.sqlite", offers, {"source": "test"})
    spec = JobSpec(
        language="en",
        model="llama-3.2-1b",
        method="full_finetune",
        dataset_tokens=2e7,
        gradient_checkpointing=True,
        micro_batch_size=micro,
        num_gpus=1,
    )
    return rank_offers(spec, db_path=db, limit=5)


def test_the_memory_figures_behind_this_file() -> None:
    """The premise: micro-batch 16 does not fit an H100 within the 95 % threshold, and fits an H200."""
    need = estimate(
        EstimateRequest(model="llama-3.2-1b", method="full_finetune", micro_batch_size=16, gradient_checkpointing=True)
    ).per_gpu_gib
    assert 79.65 * 0.95 < need <= 140.4 * 0.95


def test_a_card_that_holds_the_stated_micro_batch_leads(tmp_path: Path) -> None:
    """H100 at $2/h (micro-batch 16 does not fit it) vs H200 at $4/h (it does): the H200 leads at micro-batch 16."""
    result = _rank(tmp_path, [_card("H100", 79.65, 2.0), _card("H200", 140.4, 4.0)], 16)
    top = result.offers[0]
    assert top.gpu == "H200" and top.settings["micro_batch_size"] == 16
    assert all(o.settings["micro_batch_size"] == 16 for o in result.offers)
    assert result.cheapest_that_fits is not None and result.cheapest_that_fits.gpu == "H200"


def test_a_smaller_micro_batch_only_when_nothing_holds_the_stated_one(tmp_path: Path) -> None:
    """Only the H100 is offered: it runs a smaller micro-batch, and its reasons say which and why."""
    result = _rank(tmp_path, [_card("H100", 79.65, 2.0)], 16)
    top = result.offers[0]
    assert top.gpu == "H100" and top.settings["micro_batch_size"] < 16
    assert any(r.code == "micro_batch_lowered" for r in top.reasons)
