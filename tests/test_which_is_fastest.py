"""'Which is the fastest?' asks which plan that is; it does not change the plan. With a question word (which, what,
qual, yang mana) a superlative is a question, answered with the ranking's fastest (or cheapest) plan that fits and
the limits it misses, the job and the offer order kept; it switched the thread to speed first (a change). Without a
question word ("the cheapest one?", "something faster?") it stays a wish to switch. Class seen in the tune half of the
money-and-time blind dialogue set; sentences written for this test, in it/id/en."""

from __future__ import annotations

import pytest

JOBS = {
    "en": "LoRA on Llama 3.1 8B, 30k examples of 1024 tokens, budget $40",
    "it": "LoRA su Llama 3.1 8B, 30k esempi da 1024 token, budget 40 euro",
    "id": "LoRA pada Llama 3.1 8B, 30 ribu contoh 1024 token, budget 700 ribu rupiah",
}
ASKED = [
    ("en", "which one is the fastest?", "fastest"),
    ("en", "what's the cheapest option there is?", "cheapest_that_fits"),
    ("it", "qual è l'opzione più rapida?", "fastest"),
    ("it", "e quale sarebbe la più economica?", "cheapest_that_fits"),
    ("id", "mana yang paling cepat?", "fastest"),
    ("id", "yang paling murah yang mana ya?", "cheapest_that_fits"),
]


@pytest.mark.parametrize(("language", "question", "end"), ASKED)
def test_which_is_fastest_names_that_plan_and_keeps_the_job(advisor, language, question, end):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(question, thread_id=first["thread_id"])
    assert result["act"] == "question", result["answer"]
    assert result["spec"] == first["spec"]
    named = result["alternatives"][end.replace("_that_fits", "")]
    assert named["gpu"].replace("-", "") in result["answer"].replace("-", "").replace(" ", ""), result["answer"]
    after = advisor.respond("how much is the plan?", thread_id=first["thread_id"])
    assert after["verdict"]["gpu"] == first["verdict"]["gpu"]  # the plan shown first is still the plan
    assert after["verdict"]["total_cost"] == first["verdict"]["total_cost"]


@pytest.mark.parametrize(("language", "wish"), [("en", "the fastest one?"), ("it", "qualcosa di più veloce?")])
def test_a_superlative_without_a_question_word_still_switches(advisor, language, wish):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(wish, thread_id=first["thread_id"])
    assert result["act"] == "change", result["answer"]
