"""'Is a 48 GB card enough, or do I need an H100?': a fit question that offers a card size and a bigger named GPU as
alternatives asks whether the smaller suffices. The answer is about the smaller card; when it is too small, the answer
is about the named GPU and says the smaller would not do. The named GPU is an alternative, not a wish: a yes for the
card ranks every card that holds the job."""

from __future__ import annotations

import re

import pytest

from agent.service import Advisor

SMALLER_SUFFICES = [
    "QLoRA on Qwen2.5 32B with 10M tokens: will a single 48GB card do, or should I get an H100?",
    "Do I need an H100 for QLoRA on Qwen2.5 32B with 10M tokens, or is a 48GB card enough?",
    "QLoRA su Qwen2.5 32B, 10 milioni di token: mi basta una scheda da 48GB o devo prendere una H100?",
    "QLoRA Qwen2.5 32B, 10 juta token: cukup pakai kartu 48GB atau perlu H100?",
]


@pytest.mark.parametrize("text", SMALLER_SUFFICES)
def test_the_smaller_card_is_answered_and_rented(advisor: Advisor, text: str) -> None:
    result = advisor.respond(text)
    first = result["answer"].splitlines()[0]
    assert result["verdict"]["answer"] == "yes"
    assert re.search(r"48\s*GB", first) and "H100" not in first, first
    assert {offer["gpu"] for offer in result["offers"]} - {"H100"}  # not confined to the alternative


TOO_SMALL = [
    ("Full fine-tune of Llama 3.2 3B on 5M tokens: is a 24GB card enough or do I need an H100?", "24 GB"),
    ("Full fine-tuning di Llama 3.2 3B su 5 milioni di token: basta una scheda da 24GB o serve una H100?", "24 GB"),
    ("Full fine-tune Llama 3.2 3B, 5 juta token: cukup kartu 24GB atau harus H100?", "24 GB"),
]


@pytest.mark.parametrize(("text", "smaller"), TOO_SMALL)
def test_a_smaller_card_too_small_leaves_the_named_gpu(advisor: Advisor, text: str, smaller: str) -> None:
    result = advisor.respond(text)
    first = result["answer"].splitlines()[0]
    assert result["verdict"]["answer"] == "yes"
    assert "H100" in first and smaller in first, first  # yes for the H100, and the 24 GB card would not do
    assert result["offers"][0]["gpu"] == "H100"


def test_a_card_size_the_named_gpu_has_is_no_alternative(advisor: Advisor) -> None:
    result = advisor.respond("QLoRA on Qwen2.5 32B with 10M tokens: is one H100 80GB enough?")
    first = result["answer"].splitlines()[0]
    assert result["verdict"]["answer"] == "yes" and "H100" in first


NAMED = [
    ("QLoRA on Qwen2.5 32B, 10M tokens: do I need an H100 or is an L40S enough?", "L40S"),
    ("QLoRA su Qwen2.5 32B, 10 milioni di token: serve una H100 o basta una L40S?", "L40S"),
    ("QLoRA Qwen2.5 32B, 10 juta token: perlu H100 atau cukup L40S?", "L40S"),
    ("Full fine-tune of Llama 3.2 3B on 5M tokens: do I need an H100 or will an RTX 4090 do?", "H100"),
]


@pytest.mark.parametrize(("text", "answered"), NAMED)
def test_two_named_gpus_are_tried_from_the_smaller(advisor: Advisor, text: str, answered: str) -> None:
    result = advisor.respond(text)
    first = result["answer"].splitlines()[0]
    assert result["verdict"]["answer"] == "yes"
    assert answered in first, first
    if answered == "H100":  # the smaller one would not do: said
        assert "RTX4090" in first, first


SPARE_MEMORY = [
    ("QLoRA on Qwen2.5 32B with 10M tokens: is one H100 enough?", r"32\.\d"),
    ("QLoRA su Qwen2.5 32B, 10 milioni di token: basta una H100?", r"32,\d"),
    ("QLoRA Qwen2.5 32B, 10 juta token: cukup satu H100?", r"32,\d"),
]


@pytest.mark.parametrize(("text", "need"), SPARE_MEMORY)
def test_a_yes_names_what_the_job_needs_not_the_memory_the_plan_spends_on_speed(
    advisor: Advisor, text: str, need: str
) -> None:
    result = advisor.respond(text)
    first = result["answer"].splitlines()[0]
    estimated = result["single_gpu_estimate"]["per_gpu_gib"]  # the job at its stated settings on one H100
    plan = result["offers"][0]["per_gpu_gib"]
    assert result["verdict"]["answer"] == "yes" and plan > estimated + 10  # the plan turned checkpointing off
    assert re.search(need, first) and round(estimated) == 32, first  # the need, as the estimate states it
    assert re.search(rf"\b{int(plan)}[.,]\d", first), first  # and what the plan below uses, said
