"""A question that sets one named option against the plan ("a colleague suggests 2 H100s: how does that compare with
your plan?") compares the two: the option at the count named, with its best plan, beside the plan, and which wins.
It was answered as a fit question about the H100s (after a fit answer) or as a what-if. Class seen in the tune half
of the hardware-first blind dialogue set; sentences written for this test, in it/id/en."""

from __future__ import annotations

import pytest

from agent.service import Advisor

CASES = {
    "it": (
        "LoRA su Llama 3.1 8B, 30mila esempi",
        "Un collega mi propone 2 H100 per questo lavoro: come si confronta con il tuo piano?",
    ),
    "id": (
        "LoRA Llama 3.1 8B, 30 ribu contoh",
        "Teman saya menyarankan 2 H100 untuk kerjaan ini. Dibanding rencanamu gimana?",
    ),
    "en": (
        "LoRA on Llama 3.1 8B, 30k examples",
        "A colleague suggests 2 H100s for this job. How does that compare with your plan?",
    ),
}


@pytest.mark.parametrize("language", CASES)
def test_an_option_set_against_the_plan_is_compared_with_it(advisor: Advisor, language: str) -> None:
    job, question = CASES[language]
    first = advisor.respond(job)
    plan = first["offers"][0]
    turn = advisor.respond(question, thread_id=first["thread_id"])
    lines = turn["answer"].split("\n")
    assert turn["act"] == "question" and turn["spec"] == first["spec"], turn["answer"]
    assert any(line.startswith("2× H100: 2× H100 ") for line in lines), turn["answer"]
    assert any(line.startswith(f"{plan['gpu']}: ") for line in lines), turn["answer"]
