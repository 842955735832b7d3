"""Before any job: a message that says what the user wants to do ("I'd like to fine-tune a small model") or asks what
to rent with the facts it has ("I have $300 to spend on GPUs, what should I get?"), and names no model, is answered
by asking for the model (the facts it states are kept for the job), not with a general FAQ answer or an inverse
question; and "a small model" is not "the smallest model"."""

from __future__ import annotations

import re

import pytest

MODEL_WORD = re.compile(r"(?i)model")
INTENT = [
    ("en", "I'd like to fine-tune a small model for my support chats, where should I begin?"),
    ("it", "vorrei addestrare un modello piccolo sui miei documenti, da dove parto?"),
    ("id", "aku pengen fine-tuning model kecil buat chatbot kantor, mulai dari mana?"),
]
BUDGET_ONLY = [
    ("en", "I have $300 to spend on GPUs, what should I get?", "Llama 3.1 8B with LoRA", "USD"),
    ("it", "ho 300 euro da spendere in GPU, cosa mi conviene?", "Llama 3.1 8B con LoRA", "EUR"),
    ("id", "aku punya 300 ribu buat sewa GPU, yang cocok apa?", "Llama 3.1 8B pakai LoRA", "IDR"),
]


@pytest.mark.parametrize(("language", "message"), INTENT)
def test_a_wish_to_fine_tune_without_a_model_asks_for_it(advisor, language, message):
    result = advisor.respond(message)
    assert result["act"] == "ask_back", result["answer"]
    assert MODEL_WORD.search(result["answer"]), result["answer"]


@pytest.mark.parametrize(("language", "message", "model", "currency"), BUDGET_ONLY)
def test_a_budget_and_what_should_i_get_asks_for_the_model_and_keeps_the_budget(
    advisor, language, message, model, currency
):
    first = advisor.respond(message)
    assert first["act"] == "ask_back", first["answer"]
    result = advisor.respond(model, thread_id=first["thread_id"])
    assert result["act"] == "new_job" and result["offers"], result["answer"]
    assert result["spec"]["budget"]["currency"] == currency and result["spec"]["model"] == "llama-3.1-8b"
