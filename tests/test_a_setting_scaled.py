"""A setting scaled by a factor ("10 times the data", "raddoppia le epoche", "setengah datanya") is the job's value
times that factor: a what-if when asked, a change when said (it was a plain question about the plan's cost, or
declined). "The data" is the job's data field (its tokens, else its examples). Class seen in the tune half of the
newcomers blind set; sentences written for this test, in it/id/en. Also: a message that sizes the data with a word
an off-topic check listens for ("news") is about the job."""

from __future__ import annotations

import pytest

JOBS = {
    "en": "LoRA on Mistral 7B, 20k examples, 1 epoch",
    "it": "LoRA su Mistral 7B, 20k esempi, 1 epoca",
    "id": "LoRA pada Mistral 7B, 20 ribu contoh, 1 epoch",
}


@pytest.mark.parametrize(
    ("language", "text", "field", "value"),
    [
        ("en", "what would 10x the data cost?", "dataset_examples", 200_000),
        ("it", "e se i dati fossero il doppio, quanto ci metterebbe?", "dataset_examples", 40_000),
        ("id", "kalau contohnya cuma setengah, biayanya berapa?", "dataset_examples", 10_000),
        ("en", "and if I tripled the epochs?", "epochs", 3.0),
    ],
)
def test_a_setting_scaled_in_a_question_is_a_what_if_of_that_value(advisor, language, text, field, value):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(text, thread_id=first["thread_id"])
    assert result["act"] == "what_if", result["answer"]
    assert result["spec"] == first["spec"]
    adopted = advisor.respond(
        {"en": "ok, do that", "it": "ok, fallo", "id": "oke, pakai itu"}[language], thread_id=first["thread_id"]
    )
    assert adopted["spec"][field] == value


@pytest.mark.parametrize(
    ("language", "text", "field", "value"),
    [("it", "raddoppia le epoche", "epochs", 2.0), ("id", "datanya digandakan aja", "dataset_examples", 40_000)],
)
def test_a_setting_scaled_in_a_statement_changes_it(advisor, language, text, field, value):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(text, thread_id=first["thread_id"])
    assert result["act"] == "change", result["answer"]
    assert result["spec"][field] == value
    assert result["changed"] == [field]


def test_a_scale_with_nothing_to_scale_changes_nothing(advisor):
    first = advisor.respond("LoRA on Mistral 7B")  # no data size stated: nothing to double
    result = advisor.respond("what if we doubled the data?", thread_id=first["thread_id"])
    assert result["spec"] == first["spec"]


def test_data_counted_in_news_articles_sizes_the_job(advisor):
    first = advisor.respond("LoRA pada Mistral 7B")
    result = advisor.respond("Kami punya arsip sekitar 50 ribu berita.", thread_id=first["thread_id"])
    assert result["act"] == "change", result["answer"]
    assert result["spec"]["dataset_examples"] == 50_000
