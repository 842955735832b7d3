""" "X, not Y" is a why-not only when the user asks why: "e se usassi LoRA invece di QLoRA?" is a what-if about LoRA.
In "why QLoRA and not LoRA?" the option asked about is the one that is not the plan (LoRA). And another method whose
best plan rents the same machine is not "already the plan": its cost and time differ."""

from __future__ import annotations

import pytest

JOBS = {
    "en": "QLoRA on Llama 3.1 8B, 30k examples",
    "it": "QLoRA su Llama 3.1 8B, 30mila esempi",
    "id": "QLoRA Llama 3.1 8B, 30 ribu contoh",
}
ALREADY = ("already the plan", "già il piano", "sudah menjadi rencana")
CONTRAST_WHAT_IF = [
    ("en", "with plain LoRA rather than QLoRA, how much would it cost?"),
    ("it", "e se usassi LoRA invece di QLoRA, quanto cambia?"),
    ("id", "kalau pakai LoRA biasa, bukan QLoRA, harganya beda jauh nggak?"),
]
WHY_THE_OTHER = [
    ("en", "why QLoRA and not plain LoRA?"),
    ("it", "perché QLoRA e non LoRA?"),
    ("id", "kenapa QLoRA, bukan LoRA?"),
]


@pytest.mark.parametrize(("language", "message"), CONTRAST_WHAT_IF)
def test_a_contrast_without_why_is_a_what_if(advisor, language, message):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["act"] == "what_if" and result["spec"] == first["spec"], result["answer"]
    assert "LoRA" in result["answer"] and not any(text in result["answer"] for text in ALREADY), result["answer"]


@pytest.mark.parametrize(("language", "message"), WHY_THE_OTHER)
def test_why_this_and_not_that_asks_about_that(advisor, language, message):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["act"] == "question" and result["spec"] == first["spec"], result["answer"]
    head = result["answer"].split("\n")[0]
    assert head.startswith("LoRA") and "QLoRA" in head, result["answer"]  # the job's method is the reason
    assert not any(text in head for text in ALREADY), result["answer"]
