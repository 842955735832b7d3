"""Questions about the plan's spot use are questions, not what-ifs or changes (classes seen in the tune half of the
spot-and-reliability blind set; sentences written for this test, in it/id/en):

- "is the plan on spot or not?", "the spot discount in percent?", "how many interruptions?", "spot and on-demand
  totals side by side", and "is spot worth it?" where the job allows spot already: the plan's spot use, job kept (they
  were what-ifs answering "already in the plan", or changes);
- a total asked on condition of spot the job does not allow yet ("if spot were allowed, the total?") still proposes
  spot, and "and on spot?" is still the spot delta;
- what others say before a question ("I read that some providers ...; is my plan affected?") states no change;
- a condition before a question ("with only 10 hours, ...?") makes it hypothetical, not a change of the job;
- "back to the spot plan" returns to it; "export the on-demand plan" exports the plan.
"""

from __future__ import annotations

import pytest

SPOT_JOBS = {
    "en": "LoRA on Mistral 7B, 20k examples, spot is fine",
    "it": "LoRA su Mistral 7B, 20k esempi, le spot vanno bene",
    "id": "LoRA pada Mistral 7B, 20 ribu contoh, spot boleh",
}


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "is the plan using spot or not?"),
        ("en", "how much is the spot discount here, in percent?"),
        ("en", "show me the spot and on-demand totals side by side"),
        ("en", "roughly how many interruptions should I expect?"),
        ("it", "il piano usa lo spot o no?"),
        ("it", "mettimi i totali con e senza spot"),
        ("id", "rencana ini pakai spot atau nggak sih?"),
        ("id", "hemat berapa persen kalau spot?"),
        ("id", "untuk job sesingkat ini spot masih lebih hemat?"),
    ],
)
def test_a_question_about_the_plans_spot_use_keeps_the_job(advisor, language, text):
    first = advisor.respond(SPOT_JOBS[language])
    result = advisor.respond(text, thread_id=first["thread_id"])
    assert result["act"] == "question", result["answer"]
    assert result["spec"] == first["spec"]
    assert "spot" in result["answer"].lower()


@pytest.mark.parametrize("text", ["if spot were allowed, what would the total be?", "and on spot, is it worth it?"])
def test_spot_proposed_on_a_job_that_does_not_allow_it_is_a_what_if(advisor, text):
    first = advisor.respond("LoRA on Mistral 7B, 20k examples")
    result = advisor.respond(text, thread_id=first["thread_id"])
    assert result["act"] == "what_if", result["answer"]
    assert result["spec"] == first["spec"]


def test_what_others_say_before_a_question_changes_nothing(advisor):
    first = advisor.respond(SPOT_JOBS["en"])
    result = advisor.respond(
        "I read that some providers sell a market price as on-demand. Is my plan affected?",
        thread_id=first["thread_id"],
    )
    assert result["act"] in ("question", "what_if"), result["answer"]
    assert result["spec"] == first["spec"]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "With only 10 hours, would you still advise spot?"),
        ("it", "Con solo 10 ore, mi consigli ancora lo spot?"),
    ],
)
def test_a_condition_before_the_question_is_no_change(advisor, language, text):
    first = advisor.respond(SPOT_JOBS[language])
    result = advisor.respond(text, thread_id=first["thread_id"])
    assert result["act"] in ("question", "what_if"), result["answer"]
    assert result["spec"] == first["spec"]


def test_back_to_the_spot_plan_returns_to_it(advisor):
    first = advisor.respond(SPOT_JOBS["en"])
    advisor.respond("actually no spot", thread_id=first["thread_id"])
    result = advisor.respond("hmm, back to the spot plan", thread_id=first["thread_id"])
    assert result["act"] == "undo", result["answer"]
    assert result["spec"]["interruptible_ok"] is True


def test_exporting_the_on_demand_plan_exports_the_plan(advisor):
    first = advisor.respond("LoRA on Mistral 7B, 20k examples, no spot")
    result = advisor.respond("Export the on-demand plan as a SkyPilot task.", thread_id=first["thread_id"])
    assert result["act"] == "question" and "```yaml" in result["answer"], result["answer"]
    assert result["spec"] == first["spec"]
