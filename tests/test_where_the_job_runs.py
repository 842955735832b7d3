"""Limits on where a job runs, said the ways organisations say them (classes seen in the tune half of the
where-and-on-what blind set; sentences written for this test, in it/id/en):

- a limit lifted in a question ("what would it cost outside Azure?", "senza il vincolo UE quanto costa?", "kalau di
  luar Indonesia berapa?") is a what-if without it, the job kept; it was the plan's own cost;
- places named as examples or allowances in a question ("like Germany or Austria?", "pakai Singapura",
  "allowed Canada too") are a what-if of those places, added to the job's when said with "also"/"anche"/"juga";
- a question that names the job's own limit ("still within the $90?", "benar di Jakarta?") asks about the plan;
- a negation before a comma does not negate what follows ("non importa più, togli il vincolo di regione"), and a
  negated removal removes nothing ("don't remove the budget");
- "dirupiahkan" asks for the total in rupiah.
"""

from __future__ import annotations

import pytest

from agent.graph.acts.clearing import clears


@pytest.mark.parametrize(
    ("job", "ask", "cleared"),
    [
        ("LoRA on Mistral 7B, 30k examples, only on AWS", "what would it cost outside AWS?", "providers"),
        ("LoRA su Mistral 7B, 30mila esempi, solo in Europa", "senza il vincolo UE quanto costerebbe?", "regions"),
        ("LoRA Mistral 7B, 30 ribu contoh, hanya di Indonesia", "kalau di luar Indonesia berapa?", "regions"),
    ],
)
def test_a_limit_lifted_in_a_question_is_a_what_if_without_it(advisor, job, ask, cleared):
    first = advisor.respond(job)
    assert first["spec"][cleared], first["spec"]
    result = advisor.respond(ask, thread_id=first["thread_id"])
    assert result["act"] == "what_if" and result["spec"] == first["spec"], result["answer"]


@pytest.mark.parametrize(
    ("job", "ask", "places"),
    [
        (
            "LoRA on Mistral 7B, 30k examples, only in France",
            "how much if we also allowed Canada?",
            {"france", "canada"},
        ),
        ("LoRA su Mistral 7B, 30mila esempi, solo in Francia", "e costerebbe meno tipo Germania?", {"germany"}),
        ("LoRA Mistral 7B, 30 ribu contoh, hanya di Indonesia", "kalau boleh pakai Singapura, berapa?", {"singapore"}),
    ],
)
def test_places_named_in_a_question_are_a_what_if_of_them(advisor, job, ask, places):
    first = advisor.respond(job)
    result = advisor.respond(ask, thread_id=first["thread_id"])
    assert result["act"] == "what_if" and result["spec"] == first["spec"], result["answer"]
    adopted = advisor.respond("ok, do that", thread_id=first["thread_id"])
    assert set(adopted["spec"]["regions"]) == places, adopted["answer"]


@pytest.mark.parametrize(
    ("job", "ask"),
    [
        ("LoRA on Mistral 7B, 30k examples, budget $90", "still within the $90?"),
        ("LoRA Mistral 7B, 30 ribu contoh, datanya harus di Jakarta", "region-nya benar di Jakarta kan?"),
    ],
)
def test_a_question_naming_the_jobs_own_limit_asks_about_the_plan(advisor, job, ask):
    first = advisor.respond(job)
    result = advisor.respond(ask, thread_id=first["thread_id"])
    assert result["act"] == "question" and result["spec"] == first["spec"], result["answer"]


@pytest.mark.parametrize(
    ("text", "language", "fields"),
    [
        ("non importa più, togli il vincolo di regione", "it", ("regions",)),
        ("lokasi sudah tidak penting, hapus batasan region-nya", "id", ("regions",)),
        ("please don't remove the budget", "en", ()),
        ("non togliere la scadenza, togli solo il budget", "it", ("budget",)),
    ],
)
def test_a_negation_reaches_only_its_own_part_of_the_sentence(text, language, fields):
    assert clears(text, language) == fields


def test_a_total_asked_in_rupiah_by_a_verb_is_a_currency_question(advisor):
    first = advisor.respond("LoRA Mistral 7B, 30 ribu contoh, budget 50 dolar")
    result = advisor.respond("totalnya kalau dirupiahkan jadi berapa?", thread_id=first["thread_id"])
    assert result["act"] == "question" and "Rp" in result["answer"], result["answer"]


@pytest.mark.parametrize(
    ("job", "ask", "provider"),
    [
        ("LoRA on Mistral 7B, 30k examples", "why is lambda not in the list?", "lambda"),
        ("LoRA su Mistral 7B, 30mila esempi", "perché tra le offerte non c'è runpod?", "runpod"),
        ("LoRA Mistral 7B, 30 ribu contoh", "kok aws nggak muncul di daftar?", "aws"),
    ],
)
def test_why_a_provider_is_missing_is_a_why_not_of_it(advisor, job, ask, provider):
    first = advisor.respond(job)
    result = advisor.respond(ask, thread_id=first["thread_id"])
    assert result["act"] in ("question", "what_if") and result["spec"] == first["spec"], result["answer"]
    assert result["answer"].lower().count(provider) >= 1 and "listed" not in result["answer"], result["answer"]


def test_a_provider_to_avoid_is_no_wish_for_it(advisor):
    first = advisor.respond("LoRA Mistral 7B, 30 ribu contoh")
    result = advisor.respond("kalau pakai provider selain aws, berapa?", thread_id=first["thread_id"])
    assert result["act"] == "what_if" and result["spec"] == first["spec"], result["answer"]
    assert "provider aws" not in result["answer"], result["answer"]


def test_other_regions_asked_for_are_the_close_alternatives(advisor):
    first = advisor.respond("LoRA on Mistral 7B, 30k examples")
    result = advisor.respond("is there another region that comes close in price?", thread_id=first["thread_id"])
    assert result["act"] == "question" and "Region" in result["answer"], result["answer"]
