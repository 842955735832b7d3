"""Two kinds of question that were read as something else. (1) 'What is the smallest budget that works?' asks what
the job costs at least: a cost question answered with the cheapest plan's cost, not an inverse question about the
largest model ('smallest' and 'paling kecil' opened one). (2) 'Why does memory bandwidth matter for training?' asks
about the concept in general: answered from the knowledge base with its source, not with the plan's memory
breakdown; 'why is the plan on spot?', 'why does it take so long?' and 'why does NVLink matter here?' stay
questions about the plan. Classes seen in the tune half of the money-and-time blind dialogue set; sentences written
for this test, in it/id/en."""

from __future__ import annotations

import re

import pytest

JOBS = {
    "en": "Full fine-tune of Qwen2.5 7B on 300M tokens, budget $15",
    "it": "Full fine-tuning di Qwen2.5 7B su 300M token, budget 15 euro",
    "id": "Full fine-tune Qwen2.5 7B, 300 juta token, budget 250 ribu rupiah",
}
LEAST_BUDGET = [
    ("en", "what's the smallest budget that would be enough?"),
    ("en", "what is the lowest budget this can run on?"),
    ("it", "qual è il budget più basso che basta?"),
    ("id", "budget paling kecil yang cukup berapa?"),
]
MONEY = {"en": r"\$\s?\d", "it": r"\d\s?(?:\$|€)", "id": r"(?:\d\s?\$|Rp\s?\d)"}


@pytest.mark.parametrize(("language", "question"), LEAST_BUDGET)
def test_the_least_budget_is_a_cost_question(advisor, language, question):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(question, thread_id=first["thread_id"])
    assert result["act"] == "question", result["answer"]
    assert result["spec"] == first["spec"]
    assert re.search(MONEY[language], result["answer"]), result["answer"]
    cheapest = first["alternatives"]["cheapest"]
    assert cheapest["gpu"] in result["answer"], result["answer"]


CONCEPTS = [
    ("en", "why does memory bandwidth matter for training?"),
    ("it", "perché la banda di memoria conta così tanto nell'addestramento?"),
    ("id", "kenapa interkoneksi antar GPU itu penting buat training?"),
]
SOURCES = {"en": "Source", "it": "Fonte", "id": "Sumber"}


@pytest.mark.parametrize(("language", "question"), CONCEPTS)
def test_why_a_concept_matters_is_answered_from_the_knowledge_base(advisor, language, question):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(question, thread_id=first["thread_id"])
    assert result["act"] == "faq", result["answer"]
    assert SOURCES[language] in result["answer"], result["answer"]
    assert result["spec"] == first["spec"]


@pytest.mark.parametrize(
    ("language", "question"),
    [
        ("en", "why does it take so long?"),
        ("en", "why is this plan on one GPU?"),
        ("it", "perché costa così tanto?"),
        ("en", "why does NVLink matter here?"),
        ("it", "perché la memoria conta così tanto nel mio caso?"),
    ],
)
def test_why_about_the_plan_stays_a_question(advisor, language, question):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(question, thread_id=first["thread_id"])
    assert result["act"] == "question", result["answer"]
