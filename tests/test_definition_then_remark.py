"""A definition asked in a job thread and followed by a remark ("what is QLoRA? everyone keeps telling me to use
it") is a definition from the KB, job kept; the question need not end the message."""

from __future__ import annotations

import pytest

CASES = [
    ("en", "LoRA on Llama 3.1 8B, 20k examples", "what is QLoRA? everyone keeps telling me to use it"),
    ("it", "LoRA su Llama 3.1 8B, 20mila esempi", "cos'è FSDP? me ne parlano tutti"),
    ("id", "LoRA Llama 3.1 8B, 20 ribu contoh", "apa itu FSDP? temen-temen pada nyaranin"),
]


@pytest.mark.parametrize(("language", "job", "message"), CASES)
def test_a_definition_before_a_remark_is_answered_from_the_kb(advisor, language, job, message):
    first = advisor.respond(job)
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["act"] == "faq" and result["spec"] == first["spec"], result["answer"]
    assert result["citations"], result["answer"]
