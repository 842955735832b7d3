"""Corrections of what the job holds. "It's the 7B, not the 13B" on a Llama 2 13B job is Llama 2 7B (the size named
alone is the job's model family at that size, where the registry has it), not an unknown 7B model; and a bare number
set against the job's current value ("4096, not 8192", "2 non 3", "4, bukan 8") changes the field holding that value."""

from __future__ import annotations

import pytest

SIZES = [
    ("en", "LoRA on Qwen 2.5 14B, 20k examples", "sorry, I meant the 7B", "qwen2.5-7b"),
    ("it", "LoRA su Llama 2 13B, 20mila esempi", "scusa, ho sbagliato: è il 7B, non il 13B", "llama-2-7b"),
    ("id", "LoRA Llama 3.1 70B, 20 ribu contoh", "eh salah, yang 8B maksudnya", "llama-3.1-8b"),
]
NUMBERS = [
    ("en", "LoRA on Llama 3.1 8B, 20k examples, sequence length 8192", "oops, 4096 not 8192", "seq_len", 4096),
    ("it", "LoRA su Llama 3.1 8B, 20mila esempi, 3 epoche", "scusa, 2 non 3", "epochs", 2),
    ("id", "LoRA Llama 3.1 8B, 20 ribu contoh, pakai 8 GPU", "eh maksudnya 4, bukan 8", "num_gpus", 4),
    (
        "it",
        "LoRA su Llama 3.1 8B, 20mila esempi, seq 8192",
        "Chiedo scusa, errore mio: 2048, non 8192.",
        "seq_len",
        2048,
    ),
    ("en", "LoRA on Llama 3.1 8B, 20k examples, 3 epochs", "Sorry, 2 not 3.", "epochs", 2),
]


@pytest.mark.parametrize(("language", "job", "message", "model"), SIZES)
def test_a_size_alone_is_the_family_at_that_size(advisor, language, job, message, model):
    first = advisor.respond(job)
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["act"] == "change" and result["spec"]["model"] == model, result["answer"]
    assert result["spec"]["params_b"] is None and result["spec"]["method"] == "lora"


@pytest.mark.parametrize(("language", "job", "message", "field", "value"), NUMBERS)
def test_a_number_set_against_the_current_value_changes_that_field(advisor, language, job, message, field, value):
    first = advisor.respond(job)
    assert first["spec"][field] is not None
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["act"] == "change" and result["spec"][field] == value, result["answer"]
    assert result["changed"] == [field]


def test_a_number_against_no_current_value_changes_nothing(advisor):
    first = advisor.respond("LoRA on Llama 3.1 8B, 20k examples")
    result = advisor.respond("oops, 4096 not 8192", thread_id=first["thread_id"])
    assert result["spec"] == first["spec"]
