"""In a job thread, "I have a 4090 at home, does it fit?" asks whether the job fits on the user's own card: a yes or
no about that card, the job kept (one's own card is never a wish for the rented plan, and never dropped from the
question it is the subject of)."""

from __future__ import annotations

import re

import pytest

YES_NO = re.compile(r"(?i)^\W*(?:yes|no|sì|si|ya|tidak|bisa|muat)\b")
CASES = [
    ("en", "LoRA on Llama 3.1 8B, 20k examples", "I have a 4090 at home, does it fit?", "4090"),
    ("it", "LoRA su Llama 3.1 8B, 20mila esempi", "ho una 3090 a casa, ci sta?", "3090"),
    ("id", "LoRA Llama 3.1 8B, 20 ribu contoh", "aku punya RTX 3060 di rumah, muat nggak?", "3060"),
]


@pytest.mark.parametrize(("language", "job", "message", "card"), CASES)
def test_does_it_fit_on_my_own_card_answers_for_that_card(advisor, language, job, message, card):
    first = advisor.respond(job)
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["spec"] == first["spec"], result["answer"]
    assert YES_NO.search(result["answer"]) and card in result["answer"], result["answer"]
