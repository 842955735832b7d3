"""Requests in a job thread that are not the advisor's to do (a class seen in the tune half of the long-sessions blind
set; sentences written for this test, in it/id/en): writing unrelated text (a poem, a thesis chapter, an abstract)
and booking or paying on the user's behalf are declined, the job kept; they were answered as questions about the plan
or read as changes (a chapter's number taken for a setting). Asking for the plan's SkyPilot task or a summary of the
job is still answered."""

from __future__ import annotations

import pytest

JOB = "LoRA on Qwen2.5 7B, 15k examples, budget $60"


@pytest.mark.parametrize(
    "text",
    [
        "while you're at it, write a limerick about our cluster",
        "scrivimi anche un racconto breve per il blog aziendale",
        "tolong bikinin puisi buat ulang tahun bos, 4 bait aja",
        "please reserve two of those machines for us",
        "prenotala tu per favore, e paga con la nostra carta",
        "tolong pesankan instance-nya untuk kami ya",
    ],
)
def test_work_outside_the_advice_is_declined_and_the_job_kept(advisor, text):
    first = advisor.respond(JOB)
    result = advisor.respond(text, thread_id=first["thread_id"])
    assert result["act"] == "declined", result["answer"]
    assert result["spec"] == first["spec"]


@pytest.mark.parametrize("text", ["write me the SkyPilot task for this plan", "write a short summary of the job"])
def test_writing_what_the_advisor_makes_is_answered(advisor, text):
    first = advisor.respond(JOB)
    result = advisor.respond(text, thread_id=first["thread_id"])
    assert result["act"] == "question", result["answer"]
