"""A question marked as general ("general question: ...", "domanda generale", "is it true that ...", "why do people
...", "pertanyaan umum") asked in a job thread is a question about the subject, answered from the knowledge base;
the job is kept, even when the question names a method."""

from __future__ import annotations

import pytest

JOBS = {
    "en": "LoRA on Llama 3.1 8B, 20k examples",
    "it": "LoRA su Llama 3.1 8B, 20k esempi",
    "id": "LoRA pada Llama 3.1 8B, 20 ribu contoh",
}
GENERAL = [
    ("en", "general question: does QLoRA lose much quality compared to LoRA?"),
    ("en", "is it true that spot instances can disappear at any moment?"),
    ("en", "why do people checkpoint so often on spot machines?"),
    ("it", "domanda generale: il full fine-tuning richiede sempre più GPU?"),
    ("it", "è vero che l'NVLink serve solo con tante GPU?"),
    ("id", "pertanyaan umum: QLoRA itu lebih lambat dari LoRA nggak?"),
    ("id", "emang bener spot bisa dihentikan kapan saja?"),
]


@pytest.mark.parametrize(("language", "question"), GENERAL)
def test_a_question_marked_general_is_answered_as_one(advisor, language, question):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(question, thread_id=first["thread_id"])
    assert result["act"] == "faq", result["answer"]
    assert result["spec"] == first["spec"] and result["language"] == language
