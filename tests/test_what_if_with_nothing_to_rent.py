"""A what-if that no offer can run says what binds, with its figures, as the plan's own answer does: 'and with QLoRA
instead?' on a job far over its budget answered only 'With method QLoRA: no offer can run the job (budget).', with no
figure to act on (and the limit's code, "(budget)", untranslated). Class seen in the tune half of the money-and-time blind dialogue set; sentences written for this
test, in it/id/en."""

from __future__ import annotations

import re

import pytest

CASES = [
    ("en", "Full fine-tune of Llama 3.1 70B on 1B tokens, budget $100", "what about QLoRA instead?"),
    ("it", "Full fine-tuning di Llama 3.1 70B su 1 miliardo di token, budget 100 euro", "e se facessi QLoRA?"),
    ("id", "Full fine-tune Llama 3.1 70B, 1 miliar token, budget 1,5 juta rupiah", "kalau pakai QLoRA gimana?"),
]
BUDGET = {"en": "budget", "it": "budget", "id": "anggaran"}
OVER = {"en": "(over budget)", "it": "(fuori budget)", "id": "(melebihi anggaran)"}


@pytest.mark.parametrize(("language", "job", "what_if"), CASES)
def test_a_what_if_with_no_offer_names_the_binding_figure(advisor, language, job, what_if):
    first = advisor.respond(job)
    assert first["binding_limit"] == "budget"
    result = advisor.respond(what_if, thread_id=first["thread_id"])
    assert result["act"] == "what_if", result["answer"]
    assert result["spec"] == first["spec"]
    first_line = result["answer"].split("\n\n")[0]
    assert "QLoRA" in first_line
    assert OVER[language] in first_line  # the limit in words, not its code ("(budget)")
    assert BUDGET[language] in result["answer"].lower(), result["answer"]
    assert re.search(r"\d[\d.,]*\s?\$|\$\s?\d", result["answer"]), result["answer"]
