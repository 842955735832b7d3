"""Questions about storage and egress inside a job thread are the FAQ's to answer, with a source: the plan does not
model them (class seen in the tune half of the spot-and-reliability blind set, where such a question was answered
with the plan's cost; sentences written for this test, in it/id/en)."""

from __future__ import annotations

import pytest

CASES = [
    ("en", "LoRA on Mistral 7B, 20k examples", "does the persistent disk survive when the instance stops?"),
    ("en", "LoRA on Mistral 7B, 20k examples", "and how is egress charged when I download the checkpoints?"),
    ("it", "LoRA su Mistral 7B, 20k esempi", "lo storage persistente resta se spengo l'istanza?"),
    ("id", "LoRA pada Mistral 7B, 20 ribu contoh", "penyimpanannya hilang nggak kalau instance dimatikan?"),
]


@pytest.mark.parametrize(("language", "job", "question"), CASES)
def test_a_storage_question_in_a_thread_is_answered_from_the_faq(advisor, language, job, question):
    first = advisor.respond(job)
    result = advisor.respond(question, thread_id=first["thread_id"])
    assert result["act"] == "faq", result["answer"]
    assert result["spec"] == first["spec"]
    assert result["citations"], result["answer"]
