"""A what-if after a fit answer stays on the card that answer was about ("would it fit on a 4090?" then "and with
QLoRA?" asks about QLoRA on the 4090, not on the plan's GPU), and a fit answer to a what-if names the setting it
was answered for ("**No** (method QLoRA) — ..."). Sentences written for this test, in it/id/en."""

from __future__ import annotations

import re

import pytest

DIALOGUES = {
    "it": ("LoRA su Gemma 2 9B, contesto 8192, 30k esempi", "ci sta su una 4090?", "e se facessi QLoRA?"),
    "id": ("LoRA Gemma 2 9B, konteks 8192, 30 ribu contoh", "muat di 4090 ga?", "kalau pakai QLoRA?"),
    "en": ("LoRA on Gemma 2 9B, context 8192, 30k examples", "would it fit on a 4090?", "and with QLoRA?"),
}


@pytest.mark.parametrize("language", DIALOGUES)
def test_a_what_if_after_a_fit_answer_stays_on_that_card(advisor, language):
    job, fit, method = DIALOGUES[language]
    first = advisor.respond(job)
    asked = advisor.respond(fit, thread_id=first["thread_id"])
    assert asked["verdict"]["answer_kind"] == "yes_no" and "RTX4090" in asked["answer"], asked["answer"]
    turn = advisor.respond(method, thread_id=first["thread_id"])
    head = turn["answer"].split("\n")[0]
    assert turn["act"] == "what_if" and turn["spec"] == first["spec"], turn["answer"]
    assert "RTX4090" in head and re.search(r"qlora", head, re.I), head


def test_a_what_if_naming_other_hardware_is_about_that_hardware(advisor):
    first = advisor.respond(DIALOGUES["en"][0])
    advisor.respond("would it fit on a 4090?", thread_id=first["thread_id"])
    turn = advisor.respond("and on an H100?", thread_id=first["thread_id"])
    head = turn["answer"].split("\n")[0]
    assert "H100" in head and "RTX4090" not in head, head
