"""A setting and its number said in two turns (agent.parsing.focus): "the number of epochs I gave you is wrong" asks
for the value and the next bare number is that setting's (it was answered from the FAQ, then "3" was declined); "if
I raise the batch size, how long?" asks which value to try and the next bare number is that what-if (it was
answered as a plain question); a number said alone asks which setting it is, and the setting named next takes it.
Class seen in the tune half of the changes-of-mind blind dialogue set; sentences written for this test, in it/id/en.
"""

from __future__ import annotations

import re

import pytest

JOBS = {
    "en": "LoRA on Llama 3.1 8B, 20k examples, sequence length 2048, 1 epoch",
    "it": "LoRA su Llama 3.1 8B, 20k esempi, sequenze da 2048 token, 1 epoca",
    "id": "LoRA pada Llama 3.1 8B, 20 ribu contoh, panjang sekuens 2048, 1 epoch",
}

CORRECTIONS = [
    ("en", "Hold on, the number of epochs I gave you is wrong.", "3", "epochs", 3.0, r"\b1\b"),
    ("it", "Ho sbagliato la lunghezza delle sequenze.", "4096", "seq_len", 4096, r"2\.048"),
    ("id", "Maaf, jumlah contohnya salah.", "35000", "dataset_examples", 35000, r"20\.000"),
]


@pytest.mark.parametrize(("language", "claim", "number", "field", "value", "now"), CORRECTIONS)
def test_a_setting_said_wrong_is_asked_for_and_the_next_number_sets_it(
    advisor, language, claim, number, field, value, now
):
    first = advisor.respond(JOBS[language])
    asked = advisor.respond(claim, thread_id=first["thread_id"])
    assert asked["act"] == "ask_back", asked["answer"]
    assert asked["spec"] == first["spec"]
    assert re.search(now, asked["answer"]), asked["answer"]  # the value it has now, to be corrected
    assert asked["language"] == language
    fixed = advisor.respond(number, thread_id=first["thread_id"])
    assert fixed["act"] == "change", fixed["answer"]
    assert fixed["spec"][field] == value
    assert {k: v for k, v in fixed["spec"].items() if k != field} == {
        k: v for k, v in first["spec"].items() if k != field
    }


WHAT_IFS = [
    ("en", "If I raise the batch size, how long would it take?", "8", "ok, do that", "micro_batch_size", 8),
    ("it", "E se aumentassi le epoche, quanto verrebbe a costare?", "3", "ok, fallo", "epochs", 3.0),
    ("id", "Kalau epoch-nya dinaikkan, berapa lama jadinya?", "2", "oke, pakai itu", "epochs", 2.0),
]


@pytest.mark.parametrize(("language", "question", "number", "adopt", "field", "value"), WHAT_IFS)
def test_a_what_if_without_its_number_asks_which_and_the_next_number_is_that_what_if(
    advisor, language, question, number, adopt, field, value
):
    first = advisor.respond(JOBS[language])
    asked = advisor.respond(question, thread_id=first["thread_id"])
    assert asked["act"] == "what_if", asked["answer"]
    assert asked["spec"] == first["spec"] and not asked.get("offers")
    answered = advisor.respond(number, thread_id=first["thread_id"])
    assert answered["act"] == "what_if", answered["answer"]
    assert answered["spec"] == first["spec"]
    assert re.search(rf"\b{number}\b", answered["answer"])
    adopted = advisor.respond(adopt, thread_id=first["thread_id"])
    assert adopted["act"] == "change" and adopted["spec"][field] == value


def test_a_what_if_keeps_the_card_it_names_beside_the_open_setting(advisor):
    first = advisor.respond(JOBS["it"])
    asked = advisor.respond("e se allungassi il contesto, ci starebbe ancora su una L4?", thread_id=first["thread_id"])
    assert asked["act"] == "what_if" and asked["spec"] == first["spec"]
    answered = advisor.respond("8192", thread_id=first["thread_id"])
    assert answered["act"] == "what_if", answered["answer"]
    assert "L4" in answered["answer"] and "8.192" in answered["answer"]
    assert answered["spec"] == first["spec"]


@pytest.mark.parametrize(
    ("language", "number", "name", "field", "value"),
    [
        ("en", "16", "epochs", "epochs", 16.0),
        ("it", "ok, 12", "le epoche", "epochs", 12.0),
        ("id", "8", "micro-batch-nya", "micro_batch_size", 8),
    ],
)
def test_a_number_said_alone_asks_which_setting_and_the_name_next_takes_it(
    advisor, language, number, name, field, value
):
    first = advisor.respond(JOBS[language])
    asked = advisor.respond(number, thread_id=first["thread_id"])
    assert asked["act"] == "ask_back", asked["answer"]
    assert asked["spec"] == first["spec"]
    assert re.search(rf"\b{re.escape(number.split()[-1])}\b", asked["answer"])
    named = advisor.respond(name, thread_id=first["thread_id"])
    assert named["act"] == "change", named["answer"]
    assert named["spec"][field] == value


@pytest.mark.parametrize(
    ("language", "text", "act"),
    [
        ("en", "Is the number of epochs wrong?", "question"),  # asks whether; claims nothing
        ("en", "sorry, wrong chat. How long will the job take?", "question"),  # the claim names no setting
        ("en", "the cheapest one?", "change"),  # "one" is no number said alone
        ("it", "E se invece facessi QLoRA, quale sarebbe il modello più grande con lo stesso budget?", "inverse"),
    ],
)
def test_what_is_no_half_setting_keeps_its_reading(advisor, language, text, act):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(text, thread_id=first["thread_id"])
    assert result["act"] == act, result["answer"]


def test_the_open_setting_lasts_one_turn(advisor):
    first = advisor.respond(JOBS["en"])
    advisor.respond("the number of epochs I gave you is wrong", thread_id=first["thread_id"])
    advisor.respond("how much does the plan cost?", thread_id=first["thread_id"])
    late = advisor.respond("3", thread_id=first["thread_id"])
    assert late["act"] == "ask_back" and late["spec"]["epochs"] == first["spec"]["epochs"]


def test_a_bare_number_after_a_fit_answer_is_not_its_card_count(advisor):
    """The fit answer's rental (one L4) is the proposal; "8192" is far from any count it holds."""
    first = advisor.respond(JOBS["en"])
    advisor.respond("would it fit on one L4?", thread_id=first["thread_id"])
    after = advisor.respond("8192", thread_id=first["thread_id"])
    assert after["spec"]["num_gpus"] in (None, 1), after["answer"]
