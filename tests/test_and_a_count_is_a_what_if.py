"""A question that opens with "and" and a count of cards ("and two L40S instead of a single one?") asks about a
hypothetical beside the plan: a what-if, the job unchanged, even with "instead" in it (which, stated, changes the
job). Class seen in the tune half of the hardware-first blind dialogue set; sentences written for this test."""

from __future__ import annotations

import pytest

from agent.service import Advisor

CASES = {
    "it": ("LoRA su Llama 3.1 8B, 20mila esempi", "e due L40S invece di una sola?"),
    "id": ("LoRA Llama 3.1 8B, 20 ribu contoh", "dan dua L40S, bukan satu saja?"),
    "en": ("LoRA on Llama 3.1 8B, 20k examples", "and two L40S instead of a single one?"),
}
STATED = {
    "it": "facciamo due L40S invece di una",
    "id": "ganti jadi dua L40S",
    "en": "use two L40S instead of one",
}


@pytest.mark.parametrize("language", CASES)
def test_and_a_count_of_cards_asked_is_a_what_if(advisor: Advisor, language: str) -> None:
    job, question = CASES[language]
    first = advisor.respond(job)
    turn = advisor.respond(question, thread_id=first["thread_id"])
    assert turn["act"] == "what_if" and turn["spec"] == first["spec"], turn["answer"]
    assert "L40S" in turn["answer"], turn["answer"]


@pytest.mark.parametrize("language", STATED)
def test_the_same_count_stated_changes_the_job(advisor: Advisor, language: str) -> None:
    first = advisor.respond(CASES[language][0])
    turn = advisor.respond(STATED[language], thread_id=first["thread_id"])
    assert turn["act"] == "change" and turn["spec"]["num_gpus"] == 2, turn["answer"]
