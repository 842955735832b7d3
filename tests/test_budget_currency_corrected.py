"""Saying the budget is in another currency changes its currency and keeps its amount ("that budget is in euros, not
dollars", "scusa, intendevo euro, non dollari", "maaf, 300 itu euro bukan dolar", "same amount but in rupiah"): it was
answered as a question about the total in that currency, or declined, and the job kept a budget in the wrong
currency. Asking for the total in a currency ("how much is that in euro?", "in euro please") still changes nothing.
Class seen in the tune half of the money-and-time blind dialogue set (switching a budget's currency); sentences
written for this test, in it/id/en."""

from __future__ import annotations

import pytest

CORRECTED = [
    ("en", "LoRA on Llama 3.1 8B, 20k examples, budget 30", "oh, that budget is in euros, not dollars", 30, "EUR"),
    ("en", "LoRA on Llama 3.1 8B, 20k examples, budget $30", "same amount but in rupiah", 30, "IDR"),
    ("it", "LoRA su Llama 3.1 8B, 20k esempi, budget 30 dollari", "scusa, intendevo euro, non dollari", 30, "EUR"),
    ("id", "LoRA pada Llama 3.1 8B, 20 ribu contoh, budget 300", "maaf, 300 itu euro bukan dolar", 300, "EUR"),
]


@pytest.mark.parametrize(("language", "job", "message", "amount", "currency"), CORRECTED)
def test_the_budget_said_in_another_currency_keeps_its_amount(advisor, language, job, message, amount, currency):
    first = advisor.respond(job)
    assert first["spec"]["budget"]["currency"] != currency
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["act"] == "change", result["answer"]
    assert result["spec"]["budget"] == {"amount": amount, "currency": currency}
    assert {k: v for k, v in result["spec"].items() if k != "budget"} == {
        k: v for k, v in first["spec"].items() if k != "budget"
    }


@pytest.mark.parametrize(
    ("language", "message"),
    [("en", "how much is that in euro?"), ("en", "in euro please"), ("it", "quanto fa in euro?")],
)
def test_asking_the_total_in_a_currency_changes_nothing(advisor, language, message):
    job = {
        "en": "LoRA on Llama 3.1 8B, 20k examples, budget $30",
        "it": "LoRA su Llama 3.1 8B, 20k esempi, budget 30 dollari",
    }
    first = advisor.respond(job[language])
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["act"] == "question", result["answer"]
    assert result["spec"] == first["spec"]
