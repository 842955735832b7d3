"""'Passa a 4096' on a job with 2,048-token sequences sets the sequence to 4,096: a bare number after a setting verb
names the one setting of the job it is the same order as (it was declined as off-topic). When two settings are of
that order ("make it 2" on 1 epoch and 2 GPUs) nothing is guessed. Class seen in the tune half of the changes-of-mind
blind set; sentences written for this test, in it/id/en."""

from __future__ import annotations

import pytest

CASES = [
    ("it", "Full fine-tuning di Qwen2.5 1.5B, 100M token, sequenze da 2048", "passa a 4096"),
    ("en", "Full fine-tune of Qwen2.5 1.5B, 100M tokens, sequences of 2048", "make it 4096"),
    ("id", "Full fine-tune Qwen2.5 1.5B, 100 juta token, panjang sekuens 2048", "ganti jadi 4096"),
]


@pytest.mark.parametrize(("language", "job", "message"), CASES)
def test_a_bare_number_after_a_setting_verb_sets_the_setting_of_its_size(advisor, language, job, message):
    first = advisor.respond(job)
    assert first["spec"]["seq_len"] == 2048
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["act"] == "change", result["answer"]
    assert result["spec"]["seq_len"] == 4096
    assert {k: v for k, v in result["spec"].items() if k != "seq_len"} == {
        k: v for k, v in first["spec"].items() if k != "seq_len"
    }


def test_two_settings_of_that_size_guess_nothing(advisor):
    first = advisor.respond("LoRA on Llama 3 8B, 1 epoch, 2 GPUs, 10k examples")
    result = advisor.respond("make it 3", thread_id=first["thread_id"])
    assert result["spec"] == first["spec"]
