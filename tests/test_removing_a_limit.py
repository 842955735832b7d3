"""A limit is removed by any form of a removing verb next to the limit's name, in either order and with a word or
two between ("allora elimino la scadenza", "budgetnya dihapus aja", "let's scrap the budget"): the job loses that
field, nothing else. It was declined as off-topic: only fixed phrases ("togli il budget", "hapus budget") cleared a
limit, so a first person, a filler word or the name first was no removal. Class seen in the tune half of the
money-and-time blind dialogue set; sentences written for this test, in it/id/en."""

from __future__ import annotations

import pytest

from agent.graph.acts.clearing import removed_limits

JOBS = {
    "it": "LoRA su Llama 3.1 8B, 20k esempi, budget 80 euro, entro 24 ore",
    "id": "LoRA pada Llama 3.1 8B, 20 ribu contoh, budget 1,5 juta rupiah, maksimal 24 jam",
    "en": "LoRA on Llama 3.1 8B, 20k examples, budget $90, within 24 hours",
}
REMOVALS = [
    ("it", "allora elimino la scadenza", "deadline_hours"),
    ("it", "levo pure il budget, non importa", "budget"),
    ("it", "cancella la deadline", "deadline_hours"),
    ("it", "la scadenza toglila pure", "deadline_hours"),
    ("id", "budgetnya dihapus aja", "budget"),
    ("id", "hilangkan deadline-nya ya", "deadline_hours"),
    ("id", "ga usah pakai batas waktu", "deadline_hours"),
    ("en", "let's scrap the budget", "budget"),
    ("en", "get rid of the deadline", "deadline_hours"),
    ("en", "I'll just ditch the spending cap", "budget"),
]


@pytest.mark.parametrize(("language", "message", "field"), REMOVALS)
def test_a_removing_verb_beside_a_limit_removes_it(advisor, language, message, field):
    first = advisor.respond(JOBS[language])
    assert first["spec"][field] is not None
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["act"] == "change", result["answer"]
    assert result["spec"][field] is None
    kept = {name: value for name, value in first["spec"].items() if name != field}
    assert {name: result["spec"][name] for name in kept} == kept


@pytest.mark.parametrize(
    ("language", "message"),
    [
        ("en", "don't remove the budget"),
        ("it", "non togliere la scadenza"),
        ("id", "jangan hapus budget-nya"),
        ("it", "abbasso il budget a 30 euro"),
        ("en", "remove the second GPU from the budget plan 3"),
    ],
)
def test_a_negated_removal_or_another_verb_removes_nothing(language, message):
    assert removed_limits(message, language) == ()


def test_both_limits_named_are_both_removed():
    assert set(removed_limits("togli budget e scadenza", "it")) == {"budget", "deadline_hours"}
