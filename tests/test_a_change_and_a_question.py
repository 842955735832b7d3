"""A message that states a change and then asks about it is a change: the job takes the new value and the answer is
the new plan ("ok let's do 2 epochs, how long will that take?", "allora metti il micro-batch a 4, quanto costa?",
"oke spot boleh, hemat berapa?"). It was read as a what-if, leaving the job as it was, because the message ends with a
question mark. A setting asked about as a condition stays a what-if ("if we did 2 epochs, how long would it take?",
"e con 3 epoche, quanto ci mette?", "kalau 2 epoch, berapa lama?"). Class seen in the tune half of the changes-of-mind
blind dialogue set; sentences written for this test, in it/id/en."""

from __future__ import annotations

import re

import pytest

JOBS = {
    "en": "LoRA on Mistral 7B, 20k examples of 1024 tokens, 1 epoch",
    "it": "LoRA su Mistral 7B, 20k esempi da 1024 token, 1 epoca",
    "id": "LoRA pada Mistral 7B, 20 ribu contoh 1024 token, 1 epoch",
}
STATED = [
    ("en", "ok let's do 2 epochs, how long will that take?", {"epochs": 2.0}),
    ("en", "we're fine with spot now - does that save much?", {"interruptible_ok": True}),
    ("it", "allora metti il micro-batch a 4, quanto costa?", {"micro_batch_size": 4}),
    ("id", "oke spot boleh, hemat berapa?", {"interruptible_ok": True}),
    ("id", "epoch-nya jadi 2 aja, berapa lama?", {"epochs": 2.0}),
]


@pytest.mark.parametrize(("language", "message", "fields"), STATED)
def test_a_change_stated_before_a_question_changes_the_job(advisor, language, message, fields):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["act"] == "change", result["answer"]
    assert {name: result["spec"][name] for name in fields} == fields
    assert re.search(r"\d", result["answer"])


CONDITIONS = [
    ("en", "if we did 2 epochs, how long would it take?"),
    ("it", "e con 3 epoche, quanto ci mette?"),
    ("id", "kalau 2 epoch, berapa lama?"),
]


@pytest.mark.parametrize(("language", "message"), CONDITIONS)
def test_a_setting_asked_as_a_condition_stays_a_what_if(advisor, language, message):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["act"] == "what_if", result["answer"]
    assert result["spec"] == first["spec"]


@pytest.mark.parametrize(
    ("language", "message"),
    [("it", "con le spot, quante interruzioni mi aspetto?"), ("en", "with spot, how much would I save?")],
)
def test_a_setting_opened_with_with_is_no_change(advisor, language, message):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["act"] != "change", result["answer"]
    assert result["spec"] == first["spec"]
