"""A memory question about a mixture-of-experts model says which parameters the memory is sized on: every expert is
held (the total), each token computes with the active ones (what the time uses). Dense models get no such line.
Figures graded against the estimate's own parameter counts."""

from __future__ import annotations

import pytest

QUESTIONS = [
    ("en", "QLoRA on gpt-oss 120B, 10k examples", "It's MoE: are you sizing memory on total params or active ones?"),
    ("it", "QLoRA su gpt-oss 120B, 10k esempi", "è un MoE: la memoria la calcoli sui parametri totali o attivi?"),
    ("id", "QLoRA gpt-oss 120B, 10 ribu contoh", "ini MoE, memorinya dihitung dari parameter total atau yang aktif?"),
]


def _billions(count: int, language: str) -> str:
    """A parameter count in billions with one decimal, as the answers write numbers."""
    text = f"{count / 1e9:.1f}"
    return text.replace(".", ",") if language in ("it", "id") else text


@pytest.mark.parametrize(("language", "job", "question"), QUESTIONS)
def test_an_moe_memory_answer_names_total_and_active_parameters(advisor, language, job, question):
    first = advisor.respond(job)
    estimate = first["estimate"]
    assert estimate["active_params"] < estimate["total_params"]
    result = advisor.respond(question, thread_id=first["thread_id"])
    assert result["act"] == "question"
    for count in (estimate["total_params"], estimate["active_params"]):
        assert _billions(count, language) in result["answer"], result["answer"]


def test_a_dense_model_memory_answer_has_no_moe_line(advisor):
    first = advisor.respond("QLoRA on Llama 3.1 8B, 10k examples")
    result = advisor.respond("show me the memory breakdown", thread_id=first["thread_id"])
    assert "expert" not in result["answer"].lower()
