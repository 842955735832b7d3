"""A model family named without its size, with the size stated apart ("Llama 3.2 da 3 miliardi", "Qwen 2.5 with 14
billion parameters", "Gemma 3, 12B"), is the registry model of that family and size, not an unknown 3B model; a size
the family has no member of stays a size."""

from __future__ import annotations

import pytest

from agent.parsing import parse_message

NAMED_APART = [
    ("vorrei fare LoRA su llama 3.2 da 3 miliardi di parametri", "llama-3.2-3b"),
    ("fine-tune qwen 2.5 with 14 billion parameters on my data", "qwen2.5-14b"),
    ("QLoRA Gemma 3, yang 12B", "gemma-3-12b"),
    ("LoRA su Llama 3 e 70B di parametri", "llama-3-70b"),
]


@pytest.mark.parametrize(("text", "model"), NAMED_APART)
def test_a_family_and_a_size_stated_apart_name_the_model(text, model):
    spec = parse_message(text).spec
    assert spec.model == model and spec.params_b is None, spec


def test_a_size_the_family_lacks_stays_a_size():
    spec = parse_message("LoRA on llama 3.2 with 5 billion parameters").spec
    assert spec.model is None and spec.params_b == 5.0, spec


@pytest.mark.parametrize(
    ("text", "epochs"),
    [
        ("LoRA su Mistral 7B, una sola epoca", 1.0),
        ("LoRA on Mistral 7B, two full epochs", 2.0),
        ("tre epoche complete", 3.0),
    ],
)
def test_a_qualifier_between_a_count_and_its_unit_keeps_the_count(text, epochs):
    """'una sola epoca', 'two full epochs': a word like only/full between the number and 'epochs' is no break."""
    assert parse_message(text).spec.epochs == epochs


def test_one_more_epoch_is_not_one_epoch():
    assert parse_message("one more epoch please").spec.epochs is None
