"""Questions typed the way people chat (classes seen in the tune half of the mixed-language chat blind set; sentences
written for this test, in it/id/en):

- a question tag asks as a question mark does ("ci sta o no", "muat ga"), also in a fit question on one's own card;
- chat spellings of why and not ("xké", "nn") ask why;
- "whats the diff between LoRA and QLoRA here" compares; "ok do qlora" does it (it read "do" as a question);
- "why does training need more memory than inference?" is a general question for the FAQ;
- "is the budget enough?" ("budget 50 euro basta?", "anggaran 1 juta cukup ga?") asks about the plan against the
  budget, not about memory.
"""

from __future__ import annotations

import pytest

JOBS = {
    "en": "QLoRA on Mistral 7B, 20k examples, budget $50",
    "it": "QLoRA su Mistral 7B, 20k esempi, budget 50 euro",
    "id": "QLoRA pada Mistral 7B, 20 ribu contoh, anggaran 1 juta",
}


@pytest.mark.parametrize(
    ("language", "text"),
    [("it", "ma sulla mia 3090 ci sta o no"), ("id", "kalau di 3090 punyaku muat ga")],
)
def test_a_question_tag_asks_about_ones_own_card(advisor, language, text):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(text, thread_id=first["thread_id"])
    assert result["act"] == "what_if", result["answer"]
    assert result["spec"] == first["spec"]
    assert "3090" in result["answer"].split("\n")[0]


@pytest.mark.parametrize("text", ["e xké nn su una H100?", "ok ma perché nn su una 4090?"])
def test_chat_spellings_of_why_not_ask_why(advisor, text):
    first = advisor.respond(JOBS["it"])
    result = advisor.respond(text, thread_id=first["thread_id"])
    assert result["act"] == "question", result["answer"]
    assert result["spec"] == first["spec"]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "whats the diff between lora and qlora here"),
        ("it", "che differenza c'è tra lora e qlora qui?"),
        ("id", "bedanya lora sama qlora di sini apa?"),
    ],
)
def test_the_difference_between_two_methods_compares_them(advisor, language, text):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(text, thread_id=first["thread_id"])
    assert result["act"] == "question", result["answer"]
    assert result["spec"] == first["spec"]


def test_ok_do_a_method_does_it(advisor):
    first = advisor.respond("LoRA on Mistral 7B, 20k examples")
    advisor.respond("what about qlora?", thread_id=first["thread_id"])
    result = advisor.respond("ok do qlora", thread_id=first["thread_id"])
    assert result["act"] == "change" and result["spec"]["method"] == "qlora", result["answer"]


def test_training_against_inference_is_a_general_question(advisor):
    first = advisor.respond(JOBS["en"])
    result = advisor.respond("why does training take so much more memory than inference?", thread_id=first["thread_id"])
    assert result["act"] == "faq", result["answer"]
    assert result["citations"]


@pytest.mark.parametrize(
    ("language", "text"),
    [("en", "is $50 enough?"), ("it", "budget 50 euro basta?"), ("id", "anggaran 1 juta cukup ga?")],
)
def test_is_the_budget_enough_asks_about_the_plan_against_it(advisor, language, text):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(text, thread_id=first["thread_id"])
    assert result["act"] == "question", result["answer"]
    assert result["spec"] == first["spec"]
    assert "GiB" not in result["answer"].split("\n")[0], result["answer"]
