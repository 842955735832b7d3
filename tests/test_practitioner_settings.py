"""Settings as practitioners write them: a list of "keyword value" pairs, settings switched on or off by a word after
them ("grad_ckpt=off"), a refused option beside the chosen one ("fp32, no mixed precision"), on-demand named as a
choice, and "EU-only". Each class in it/id/en, with sentences written for this test."""

from __future__ import annotations

import pytest

from agent.parsing.parse import parse_message


def spec(text: str) -> dict:
    """The offline parser's reading of a message, unset fields dropped."""
    return {k: v for k, v in parse_message(text, use_llm=False).spec.model_dump().items() if v is not None}


@pytest.mark.parametrize(
    ("text", "seq", "examples"),
    [
        ("LoRA Mistral 7B, seq 1024, micro-batch 8, 30k esempi, 2 epoche", 1024, 30_000),
        ("QLoRA Qwen2.5 7B, seq 4096, mbs 2, 25 ribu contoh", 4096, 25_000),
        ("LoRA on Llama 3.1 8B, context 8192, batch 2, 60k examples, 1 epoch", 8192, 60_000),
    ],
)
def test_a_count_after_other_settings_is_no_sequence_length(text: str, seq: int, examples: int) -> None:
    found = spec(text)
    assert found["seq_len"] == seq and found["dataset_examples"] == examples


@pytest.mark.parametrize(
    ("text", "on"),
    [
        ("full fine-tuning Qwen2.5 1.5B, gradient checkpointing disattivato", False),
        ("full fine-tune Qwen2.5 1.5B, gradient checkpointing dimatikan", False),
        ("full fine-tune Qwen2.5 1.5B, seq 2048, grad ckpt: off, mbs 4", False),
        ("full fine-tune Qwen2.5 1.5B, gradient_checkpointing=false", False),
        ("full fine-tune Qwen2.5 1.5B, grad_ckpt=on", True),
        ("full fine-tune Qwen2.5 1.5B, no gradient checkpointing on the A100", False),
    ],
)
def test_a_setting_switched_by_the_word_after_it(text: str, on: bool) -> None:
    assert spec(text)["gradient_checkpointing"] is on


@pytest.mark.parametrize(
    "text",
    [
        "full fine-tuning Llama 3.2 1B in fp32, senza mixed precision",
        "full fine-tune Llama 3.2 1B, tanpa mixed precision, fp32 saja",
        "full fine-tune Llama 3.2 1B, pure fp32 and no AMP",
    ],
)
def test_a_refused_precision_beside_the_chosen_one(text: str) -> None:
    assert spec(text)["precision"] == "fp32"


@pytest.mark.parametrize(
    ("text", "spot"),
    [
        ("QLoRA Llama 3 70B, solo Europa, on-demand, scadenza 5 giorni", False),
        ("QLoRA Llama 3 70B, on-demand, deadline 5 hari", False),
        ("QLoRA Llama 3 70B, on demand, deadline 5 days", False),
        ("QLoRA Llama 3 70B, spot or on-demand, whichever is cheaper", True),
    ],
)
def test_on_demand_named_in_a_job_is_its_choice(text: str, spot: bool) -> None:
    assert spec(text)["interruptible_ok"] is spot


def test_on_demand_refused_is_no_choice() -> None:
    assert "interruptible_ok" not in spec("QLoRA Llama 3 70B, non serve on-demand")


@pytest.mark.parametrize("text", ["LoRA Llama 3 8B, EU-only", "LoRA Llama 3 8B, solo EU", "LoRA Llama 3 8B, EU saja"])
def test_eu_only_is_a_region(text: str) -> None:
    assert spec(text)["regions"] == ["eu"]


@pytest.mark.parametrize("text", ["quanto costa on-demand?", "berapa kalau on-demand?", "is the plan on-demand?"])
def test_on_demand_inside_a_question_is_its_subject_not_a_choice(text: str) -> None:
    assert "interruptible_ok" not in spec(text)
