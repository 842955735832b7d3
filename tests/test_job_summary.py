"""Questions about the job itself in a long conversation (a class seen in the tune half of the long-sessions blind set;
sentences written for this test, in it/id/en):

- a summary of where things stand ("give me a recap of the job", "fammi il punto della situazione", "tolong rekap
  job-nya") says every setting the job holds and the plan; it was declined as off-topic;
- what a setting was ("which budget did I set?", "quante epoche hai usato?", "anggaran yang saya berikan berapa?")
  says the job's value, or that it was not given and what the plan assumed; it was answered with the plan's cost;
- a setting stated with its value ("I told you 3 epochs") is still a change.
"""

from __future__ import annotations

import pytest

JOBS = {
    "en": ("LoRA on Mistral 7B, 12k examples, budget $80", "and 2 epochs"),
    "it": ("LoRA su Mistral 7B, 12mila esempi, budget 80 dollari", "e 2 epoche"),
    "id": ("LoRA Mistral 7B, 12 ribu contoh, budget 80 dolar", "dan 2 epoch"),
}


@pytest.mark.parametrize(
    ("language", "ask"),
    [
        ("en", "give me a recap of the job please"),
        ("it", "fammi il punto della situazione"),
        ("id", "tolong rekap job-nya"),
    ],
)
def test_a_summary_says_every_setting_and_the_plan(advisor, language, ask):
    job, change = JOBS[language]
    first = advisor.respond(job)
    changed = advisor.respond(change, thread_id=first["thread_id"])
    result = advisor.respond(ask, thread_id=first["thread_id"])
    assert result["act"] == "question" and result["spec"] == changed["spec"], result["answer"]
    answer = result["answer"]
    assert "Mistral 7B" in answer and "LoRA" in answer, answer
    assert "12,000" in answer or "12.000" in answer, answer
    assert "80" in answer and "2" in answer, answer
    assert changed["offers"][0]["provider"] in answer, answer


@pytest.mark.parametrize(
    ("language", "ask"),
    [
        ("en", "which budget did I set, again?"),
        ("it", "che budget ti avevo dato?"),
        ("id", "anggaran yang saya berikan berapa?"),
    ],
)
def test_a_setting_asked_back_is_the_jobs_value(advisor, language, ask):
    first = advisor.respond(JOBS[language][0])
    result = advisor.respond(ask, thread_id=first["thread_id"])
    assert result["act"] == "question" and result["spec"] == first["spec"], result["answer"]
    assert "80" in result["answer"], result["answer"]


@pytest.mark.parametrize(
    ("language", "ask", "unset"),
    [
        ("en", "how many epochs did you use?", "not given"),
        ("it", "quante epoche hai usato?", "Non mi hai indicato"),
        ("id", "berapa epoch yang kamu pakai?", "belum memberikan"),
    ],
)
def test_a_setting_never_given_is_said_so_with_what_the_plan_assumed(advisor, language, ask, unset):
    first = advisor.respond(JOBS[language][0])
    result = advisor.respond(ask, thread_id=first["thread_id"])
    assert result["act"] == "question" and result["spec"] == first["spec"], result["answer"]
    assert unset in result["answer"] and "1" in result["answer"], result["answer"]


def test_a_setting_said_with_its_value_is_still_a_change(advisor):
    first = advisor.respond(JOBS["en"][0])
    result = advisor.respond("I told you 3 epochs, not 1", thread_id=first["thread_id"])
    assert result["act"] == "change" and result["spec"]["epochs"] == 3.0, result["answer"]


def test_a_summary_says_the_caps_on_hardware(advisor):
    first = advisor.respond("LoRA on Mistral 7B, 12k examples, at most 2 GPUs, one machine only")
    result = advisor.respond("give me a recap of the job please", thread_id=first["thread_id"])
    assert "GPU cap 2" in result["answer"] and "machine cap 1" in result["answer"], result["answer"]
