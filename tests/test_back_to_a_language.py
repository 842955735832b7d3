"""Going back to a language is no undo: 'Balik ke bahasa Indonesia ya. Naikkan budget jadi 5 jt.' restored the
previous plan ('balik ke' opens an undo) and lost the budget; it changes the budget, in Indonesian. Class seen in
the tune half of the changes-of-mind blind dialogue set; sentences written for this test, in it/id/en."""

from __future__ import annotations

import pytest

CASES = [
    (
        "id",
        "Balik lagi ke bahasa Indonesia. Budget naik jadi 3 juta ya.",
        {"budget": {"amount": 3_000_000, "currency": "IDR"}},
    ),
    ("en", "Back to English please: make it 3 epochs.", {"epochs": 3.0}),
    ("it", "Torno all'italiano: metti 3 epoche.", {"epochs": 3.0}),
]


@pytest.mark.parametrize(("language", "message", "fields"), CASES)
def test_back_to_a_language_with_a_change_is_that_change(advisor, language, message, fields):
    first = advisor.respond("LoRA on Mistral 7B, 20k examples, 1 epoch, budget $20")
    advisor.respond("what if we used QLoRA?", thread_id=first["thread_id"])
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["act"] == "change", result["answer"]
    assert result["language"] == language
    assert {name: result["spec"][name] for name in fields} == fields
