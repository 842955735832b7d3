"""A turn about one of the offers an answer listed (a class seen in the tune half of the referring-back blind set:
"the one in Europe you listed", "take the European one"; sentences written for this test, in it/id/en):

- a question about it ("how much is the second option?", "quella su <provider> che hai elencato quanto costa?",
  "yang B200 tadi berapa lama?") is answered with that rental's figures, the job unchanged. It was answered with the
  plan's own cost, or read as a change to the region it named;
- taking it ("take the second one", "prendo la seconda", "ambil yang kedua") makes it the plan. It was declined;
- a place, a GPU or a provider said as a wish ("only in Europe") is still a change, and a place in the list beyond
  those listed is said so.

What the answer showed is read from its text (the rentals "N× GPU on provider" in the order it wrote them), not from
the product's own record of it.
"""

from __future__ import annotations

import re

import pytest

JOB = {
    "en": "LoRA on Gemma 2 9B, 40k examples, 2 epochs, budget 200 EUR",
    "it": "LoRA su Gemma 2 9B, 40mila esempi, 2 epoche, budget 200 euro",
    "id": "LoRA Gemma 2 9B, 40 ribu contoh, 2 epoch, budget 3 jt",
}
RENTAL = re.compile(r"(\d+)× ([\w.-]+)\**\s+(?:on|su|di)\s+([\w-]+)")


def shown(answer: str) -> list[tuple[int, str, str]]:
    """The rentals an answer names, in order, each once: (GPU count, GPU, provider)."""
    found: list[tuple[int, str, str]] = []
    for count, gpu, provider in RENTAL.findall(answer):
        rental = (int(count), gpu, provider)
        if rental not in found:
            found.append(rental)
    return found


def plan_of(result: dict) -> tuple[int, str, str]:
    """The plan's rental as the result's first offer gives it."""
    top = result["offers"][0]
    return top["total_gpus"], top["gpu"], top["provider"]


@pytest.mark.parametrize(
    ("language", "question"),
    [
        ("en", "how much is the second option?"),
        ("it", "e la seconda opzione quanto costa?"),
        ("id", "opsi kedua berapa?"),
    ],
)
def test_a_question_about_the_second_rental_shown_answers_with_that_rental(advisor, language, question):
    first = advisor.respond(JOB[language])
    rentals = shown(first["answer"])
    assert len(rentals) >= 2 and rentals[0] == plan_of(first), first["answer"]
    result = advisor.respond(question, thread_id=first["thread_id"])
    assert result["act"] == "question" and result["spec"] == first["spec"], result["answer"]
    count, gpu, provider = rentals[1]
    assert f"{count}× {gpu}" in result["answer"] and provider in result["answer"], result["answer"]


@pytest.mark.parametrize(
    ("language", "take"), [("en", "take the second one"), ("it", "prendo la seconda"), ("id", "ambil yang kedua aja")]
)
def test_taking_the_second_rental_shown_makes_it_the_plan(advisor, language, take):
    first = advisor.respond(JOB[language])
    second = shown(first["answer"])[1]
    result = advisor.respond(take, thread_id=first["thread_id"])
    assert result["act"] == "change", result["answer"]
    assert plan_of(result) == second, result["answer"]
    assert result["spec"]["model"] == first["spec"]["model"] and result["spec"]["epochs"] == 2.0


@pytest.mark.parametrize(
    ("language", "ask", "about"),
    [
        (
            "en",
            "which region is it in, and what else is close?",
            "the one on {provider} you listed, how much more is it?",
        ),
        ("it", "in che regione è? alternative vicine?", "quella su {provider} che hai elencato quanto costa in più?"),
        ("id", "di region mana? ada alternatif yang dekat?", "yang di {provider} tadi selisihnya berapa?"),
    ],
)
def test_a_provider_named_from_the_close_alternatives_is_that_rental(advisor, language, ask, about):
    first = advisor.respond(JOB[language])
    close = advisor.respond(ask, thread_id=first["thread_id"])
    others = [r for r in shown(close["answer"]) if r[2] != plan_of(first)[2]]
    assert others, close["answer"]
    count, gpu, provider = others[0]
    result = advisor.respond(about.format(provider=provider), thread_id=first["thread_id"])
    assert result["act"] == "question" and result["spec"] == first["spec"], result["answer"]
    assert result["answer"].split(";")[0].count(provider) == 1 and f"{count}× {gpu}" in result["answer"]


def test_the_one_in_a_continent_is_the_listed_rental_there(advisor):
    first = advisor.respond(JOB["en"])
    close = advisor.respond("where is that, and what else is close?", thread_id=first["thread_id"])
    european = re.search(r"(\d+)× ([\w.-]+) on ([\w-]+) \((eu[\w-]*)\)", close["answer"])
    assert european, close["answer"]  # the close alternatives of this job include one in a European region
    result = advisor.respond("The one in Europe you listed: how much more is it?", thread_id=first["thread_id"])
    assert result["act"] == "question" and result["spec"] == first["spec"], result["answer"]
    assert european.group(3) in result["answer"] and european.group(4) in result["answer"], result["answer"]
    taken = advisor.respond("Ok, take the European one then.", thread_id=first["thread_id"])
    assert taken["act"] == "change" and taken["offers"][0]["provider"] == european.group(3), taken["answer"]
    assert taken["offers"][0]["region"] == european.group(4)


def test_a_gpu_named_from_the_alternatives_is_that_rental(advisor):
    first = advisor.respond(JOB["en"])
    others = [r for r in shown(first["answer"]) if r[1] != plan_of(first)[1]]
    count, gpu, provider = others[-1]
    result = advisor.respond(f"how long does the {gpu} one take?", thread_id=first["thread_id"])
    assert result["act"] == "question" and result["spec"] == first["spec"], result["answer"]
    assert f"{count}× {gpu}" in result["answer"] and provider in result["answer"], result["answer"]


def test_a_place_in_the_list_beyond_those_shown_is_said_so(advisor):
    first = advisor.respond(JOB["en"])
    result = advisor.respond("and the fifth option?", thread_id=first["thread_id"])
    assert result["act"] == "question" and result["spec"] == first["spec"]
    assert re.search(r"I listed \d offers, so there is no no\. 5", result["answer"]), result["answer"]


@pytest.mark.parametrize(
    ("language", "text"), [("en", "only in Europe please"), ("it", "solo in Europa"), ("id", "di Eropa saja")]
)
def test_a_place_said_as_a_wish_is_still_a_change(advisor, language, text):
    first = advisor.respond(JOB[language])
    result = advisor.respond(text, thread_id=first["thread_id"])
    assert result["act"] == "change" and result["spec"]["regions"] == ["europe"], result["answer"]
