"""A bare number right after a change revises that change: "3 epochs" then "no wait, 2 is enough" sets 2 epochs (it
was declined as off-topic: the number names no field). Only a number of the same order as the value it revises
counts ("45000" after a sequence length of 4096 is no sequence length), and only when the last change set one
number field. Class seen in the tune half of the changes-of-mind blind dialogue set; sentences written for this
test, in it/id/en."""

from __future__ import annotations

import pytest

CASES = [
    ("en", "LoRA on Mistral 7B, 20k examples", "make it 3 epochs", "hmm no, 2 is enough", "epochs", 2),
    ("it", "LoRA su Mistral 7B, 20k esempi", "facciamo 3 epoche", "no aspetta, ne bastano 2", "epochs", 2),
    ("id", "LoRA pada Mistral 7B, 20 ribu contoh", "seq length 4096", "eh salah, 8192", "seq_len", 8192),
]


@pytest.mark.parametrize(("language", "job", "change", "revision", "field", "value"), CASES)
def test_a_bare_number_after_a_change_revises_it(advisor, language, job, change, revision, field, value):
    first = advisor.respond(job)
    changed = advisor.respond(change, thread_id=first["thread_id"])
    assert changed["act"] == "change" and changed["spec"][field] not in (None, value)
    revised = advisor.respond(revision, thread_id=first["thread_id"])
    assert revised["act"] == "change", revised["answer"]
    assert revised["spec"][field] == value
    assert {k: v for k, v in revised["spec"].items() if k != field} == {
        k: v for k, v in changed["spec"].items() if k != field
    }


def test_a_number_far_from_the_changed_value_is_not_read_as_it(advisor):
    first = advisor.respond("LoRA on Mistral 7B, 20k examples")
    changed = advisor.respond("seq length 4096", thread_id=first["thread_id"])
    revised = advisor.respond("45000", thread_id=first["thread_id"])
    assert revised["spec"]["seq_len"] == changed["spec"]["seq_len"]
