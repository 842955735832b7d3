"""A deadline is written as a duration wherever a changed setting is named ("With deadline 6 h:", "Con scadenza 6
ore:", "Dengan tenggat 6 jam:"), not as a label with its unit in brackets and a bare number ("scadenza (ore) 6")."""

from __future__ import annotations

import pytest

CASES = [
    (
        "en",
        "Full fine-tune Llama 3.1 8B on 500M tokens within 12 hours",
        "what if the deadline were 6 hours?",
        "deadline 6 h",
    ),
    (
        "it",
        "Full fine-tuning di Llama 3.1 8B su 500M token entro 12 ore",
        "e se la scadenza fosse 6 ore?",
        "scadenza 6 ore",
    ),
    ("id", "Full fine-tune Llama 3.1 8B, 500 juta token, tenggat 12 jam", "kalau tenggatnya 6 jam?", "tenggat 6 jam"),
]


@pytest.mark.parametrize(("language", "job", "what_if", "words"), CASES)
def test_a_deadline_what_if_names_the_deadline_as_a_duration(advisor, language, job, what_if, words):
    first = advisor.respond(job)
    assert first["spec"]["deadline_hours"] == 12
    result = advisor.respond(what_if, thread_id=first["thread_id"])
    assert result["act"] == "what_if"
    assert words in result["answer"].lower(), result["answer"]
