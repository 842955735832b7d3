"""Asking for the cheaper or the faster offer in a job thread is never off-topic, however it is worded: "yang lebih
murah apa?" (what is cheaper?) was declined because a wh-question without a domain word looked like "what's the
weather?". The plan's offers come back cheapest first, or the answer names the fastest plan ("which is the fastest?"
asks which one it is; it no longer switches the thread to speed first), the job kept."""

from __future__ import annotations

import pytest

JOBS = {
    "en": "QLoRA on Llama 3 70B, 50k examples, spot ok",
    "it": "QLoRA su Llama 3 70B, 50k esempi, spot ok",
    "id": "QLoRA Llama 3 70B, 50 ribu contoh, boleh spot",
}
ASKS = [
    ("id", "yang lebih murah apa?", "est_cost"),
    ("id", "mana yang paling cepat?", "est_hours"),
    ("it", "qual è la più economica?", "est_cost"),
    ("en", "what's cheaper?", "est_cost"),
    ("en", "what is the fastest?", "est_hours"),
]


@pytest.mark.parametrize(("language", "message", "key"), ASKS)
def test_asking_for_the_cheaper_or_faster_offer_orders_the_offers(advisor, language, message, key):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["act"] != "declined", result["answer"]
    offers = result["offers"]
    if key == "est_cost":
        assert offers and offers[0][key] == min(offer[key] for offer in offers), result["answer"]
    else:  # "which is the fastest?" names the fastest plan (a wish to switch would put it first)
        fastest = result["alternatives"]["fastest"]
        assert fastest["est_hours"] == min(offer["est_hours"] for offer in [*offers, fastest])
        assert fastest["gpu"] in result["answer"], result["answer"]
    assert {k: v for k, v in result["spec"].items()} == first["spec"]
