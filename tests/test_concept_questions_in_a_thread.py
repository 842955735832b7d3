"""A question weighing two general concepts inside a job thread ("does memory bandwidth matter more than FLOPS?",
"mana yang lebih penting?") is a knowledge-base question, not a question about the plan; memory bandwidth is a card's
property, not the interconnect the topology answer is about. Sentences written for this test, in it/id/en."""

from __future__ import annotations

import pytest

JOB = {
    "en": "LoRA on Qwen3 4B, 10k examples",
    "it": "LoRA su Qwen3 4B, 10k esempi",
    "id": "LoRA Qwen3 4B, 10 ribu contoh",
}


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "is memory bandwidth more important than peak FLOPS when training?"),
        ("it", "per l'addestramento conta di più la banda di memoria o i FLOPS?"),
        ("id", "bandwidth memori sama FLOPS, mana yang lebih penting buat training?"),
    ],
)
def test_a_concept_question_in_a_thread_is_answered_from_the_guide(advisor, language, text):
    first = advisor.respond(JOB[language])
    turn = advisor.respond(text, thread_id=first["thread_id"])
    assert turn["act"] == "faq" and turn["spec"] == first["spec"], turn["answer"]
    answer = turn["answer"].lower()
    assert turn["citations"] and ("bandwidth" in answer or "banda" in answer), turn["answer"]


def test_interconnect_bandwidth_is_still_a_question_about_the_plan(advisor):
    first = advisor.respond(JOB["en"])
    turn = advisor.respond("is the interconnect bandwidth a bottleneck here?", thread_id=first["thread_id"])
    assert turn["act"] == "question" and "NVLink" in turn["answer"], turn["answer"]
