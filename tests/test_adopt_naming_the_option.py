"""Taking the what-if just offered by its value ("ok, take the 2048 one", "oke ambil yang 2048") sets that value,
also when the what-if was asked about a card a fit answer was about (its proposal then carries that card too): the
bare number names the one number field the proposal sets, and only that field changes. Class seen in the tune half
of the hardware-first blind dialogue set ("oke ambil yang 1024" was declined); sentences written for this test."""

from __future__ import annotations

import pytest

from agent.service import Advisor

CASES = {
    "it": (
        "LoRA su Llama 3.1 8B, 20mila esempi, contesto 4096",
        "ci sta su una T4?",
        "e con contesto 2048?",
        "ok, prendo quella da 2048",
    ),
    "id": (
        "LoRA Llama 3.1 8B, 20 ribu contoh, konteks 4096",
        "muat di T4 nggak?",
        "kalau konteksnya 2048?",
        "oke ambil yang 2048",
    ),
    "en": (
        "LoRA on Llama 3.1 8B, 20k examples, 4096 context",
        "would it fit on a T4?",
        "and with a 2048 context?",
        "ok, take the 2048 one",
    ),
}


@pytest.mark.parametrize("language", CASES)
def test_taking_the_option_by_its_value_sets_that_value(advisor: Advisor, language: str) -> None:
    job, fit, what_if, take = CASES[language]
    first = advisor.respond(job)
    advisor.respond(fit, thread_id=first["thread_id"])
    asked = advisor.respond(what_if, thread_id=first["thread_id"])
    assert asked["act"] == "what_if" and asked["spec"]["seq_len"] == 4096, asked["answer"]
    taken = advisor.respond(take, thread_id=first["thread_id"])
    assert taken["act"] == "change" and taken["spec"]["seq_len"] == 2048, taken["answer"]
    assert taken["changed"] == ["seq_len"] and taken["spec"]["gpu"] == first["spec"]["gpu"], taken["answer"]
