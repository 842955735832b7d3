"""A token count too small to be the data set, said as a change in a thread whose job already sizes its data
("switch to 1024 tokens" on 20k examples), is the sequence length: it was read as a data set of 1,024 tokens
("Changed: dataset tokens 0.0 million", a 0.1 h plan). A total stated as one stays the data set's size. Class seen
in the tune half of the hardware-first blind dialogue set; sentences written for this test, in it/id/en."""

from __future__ import annotations

import pytest

from agent.service import Advisor

JOB = {
    "it": "LoRA su Llama 3.1 8B, 20mila esempi, sequenze da 4096",
    "id": "LoRA Llama 3.1 8B, 20 ribu contoh, konteks 4096",
    "en": "LoRA on Llama 3.1 8B, 20k examples, 4096 context",
}
SHORTER = {"it": "passiamo a 1024 token", "id": "ganti ke 1024 token", "en": "go down to 1024 tokens"}
TOTAL = {
    "it": "in realtà il dataset è di 80 milioni di token",
    "id": "sebenarnya datasetnya 80 juta token",
    "en": "actually the data set is 80M tokens",
}


@pytest.mark.parametrize("language", JOB)
def test_a_short_token_count_as_a_change_is_the_sequence_length(advisor: Advisor, language: str) -> None:
    first = advisor.respond(JOB[language])
    turn = advisor.respond(SHORTER[language], thread_id=first["thread_id"])
    assert turn["act"] == "change" and turn["changed"] == ["seq_len"], turn["answer"]
    assert turn["spec"]["seq_len"] == 1024 and turn["spec"]["dataset_tokens"] == first["spec"]["dataset_tokens"]


@pytest.mark.parametrize("language", JOB)
def test_a_data_set_size_as_a_change_stays_the_data_set(advisor: Advisor, language: str) -> None:
    first = advisor.respond(JOB[language])
    turn = advisor.respond(TOTAL[language], thread_id=first["thread_id"])
    assert turn["spec"]["dataset_tokens"] == 80_000_000 and turn["spec"]["seq_len"] == 4096, turn["answer"]
