"""Two follow-up classes: "that card and not a T4?" asks why not the T4 (a why-not, naming it), as "why not a T4?"
does; an everyday request (a restaurant, a hotel, a flight, a film) is off-topic even when it names a time ("per
stasera") that would otherwise read as a deadline."""

from __future__ import annotations

import pytest

JOBS = {
    "en": "LoRA on Llama 3.1 8B, 20k examples",
    "it": "LoRA su Llama 3.1 8B, 20k esempi",
    "id": "LoRA pada Llama 3.1 8B, 20 ribu contoh",
}
AND_NOT = [
    ("en", "why do you suggest that card and not a T4, which is cheaper per hour?"),
    ("it", "perché mi consigli quella scheda e non una T4 che costa meno?"),
    ("id", "kenapa pilih kartu itu, bukan T4 yang lebih murah?"),
]
OFF_TOPIC = [
    ("en", "can you recommend a good restaurant in Bologna for tonight?"),
    ("it", "già che ci sei, mi consigli un buon ristorante a Bologna per stasera?"),
    ("id", "rekomendasi restoran enak di Jakarta buat nanti malam dong"),
    ("en", "also, which hotel should I book in Rome?"),
]


@pytest.mark.parametrize(("language", "question"), AND_NOT)
def test_that_card_and_not_another_asks_why_not_the_other(advisor, language, question):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(question, thread_id=first["thread_id"])
    assert result["act"] == "question" and result["spec"] == first["spec"], result["answer"]
    assert "T4" in result["answer"], result["answer"]


@pytest.mark.parametrize(("language", "message"), OFF_TOPIC)
def test_an_everyday_request_is_off_topic(advisor, language, message):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["act"] == "declined", result["answer"]
    assert result["spec"] == first["spec"]
