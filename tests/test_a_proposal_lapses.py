"""A what-if's proposal stands until the job changes, and turning it down keeps the job. (1) 'ok, do that' after a
what-if and then a change adopted the old what-if (the QLoRA of two turns before) on top of the change: now it says
there is nothing to adopt and keeps the job. (2) 'no, keep it as it was' (it/id/en, with or without a question) right
after a what-if was read as an undo, which found no earlier plan: it is a question about the plan as it stands (the
what-if dropped), answered as asked. Class seen in the tune half of the changes-of-mind blind dialogue set;
sentences written for this test, in it/id/en."""

from __future__ import annotations

import re

import pytest

JOBS = {
    "en": "LoRA on Mistral 7B, 20k examples, 1 epoch",
    "it": "LoRA su Mistral 7B, 20k esempi, 1 epoca",
    "id": "LoRA pada Mistral 7B, 20 ribu contoh, 1 epoch",
}
WHAT_IF = {"en": "what if we used QLoRA?", "it": "e se usassi QLoRA?", "id": "kalau pakai QLoRA?"}
CHANGE = {"en": "make it 2 epochs", "it": "metti 2 epoche", "id": "jadikan 2 epoch"}
ADOPT = {"en": "ok, do that", "it": "ok, fallo", "id": "oke, pakai itu"}


@pytest.mark.parametrize("language", ["en", "it", "id"])
def test_a_change_after_a_what_if_ends_its_proposal(advisor, language):
    first = advisor.respond(JOBS[language])
    thread = first["thread_id"]
    advisor.respond(WHAT_IF[language], thread_id=thread)
    changed = advisor.respond(CHANGE[language], thread_id=thread)
    assert changed["spec"]["epochs"] == 2
    adopted = advisor.respond(ADOPT[language], thread_id=thread)
    assert adopted["spec"] == changed["spec"], adopted["answer"]  # not QLoRA


KEEP = [
    ("en", "no, keep it as it was. how long does it take?"),
    ("en", "nah, leave it as it is"),
    ("it", "no, lascia com'era. Quanto costa?"),
    ("id", "nggak jadi, biarkan seperti tadi. berapa lama?"),
]


@pytest.mark.parametrize(("language", "message"), KEEP)
def test_turning_a_what_if_down_keeps_the_job_and_answers(advisor, language, message):
    first = advisor.respond(JOBS[language])
    thread = first["thread_id"]
    advisor.respond(WHAT_IF[language], thread_id=thread)
    kept = advisor.respond(message, thread_id=thread)
    assert kept["act"] == "question", kept["answer"]
    assert kept["spec"] == first["spec"]
    assert re.search(r"\d", kept["answer"]), kept["answer"]
    after = advisor.respond(ADOPT[language], thread_id=thread)
    assert after["spec"] == first["spec"]  # the what-if turned down is no longer there to adopt
