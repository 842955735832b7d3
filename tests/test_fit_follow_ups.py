"""Follow-ups to a first message's fit answer, now that its thread has a plan (the rental that answer showed): a
method on a card ("what about LoRA on one H100?") and a count of the card asked about ("and with two of them?") are
fit what-ifs about that hardware, not a why-not against the plan or a count comparison; "what GPU would I need at
minimum?" asks for the smallest GPU, as "the smallest GPU" does. Classes seen in the tune half of the hardware-first
blind dialogue set; sentences written for this test, in it/id/en."""

from __future__ import annotations

import re

import pytest

from agent.service import Advisor

FULL_8B_ONE_H100 = {
    "it": "Fine-tuning completo di Llama 3.1 8B, 40mila esempi: ci sta su una sola H100?",
    "id": "Full fine-tune Llama 3.1 8B, 40 ribu contoh: muat di satu H100?",
    "en": "Full fine-tuning of Llama 3.1 8B on 40k examples: does it fit on a single H100?",
}
LORA_ON_ONE_H100 = {
    "it": "perché non LoRA su una sola H100?",
    "id": "kenapa nggak LoRA di satu H100 saja?",
    "en": "why not LoRA on a single H100?",
}
QLORA_70B_ONE_4090 = {
    "it": "QLoRA di Llama 3.1 70B su 10mila esempi: basta una RTX 4090?",
    "id": "QLoRA Llama 3.1 70B, 10 ribu contoh, cukup satu RTX 4090?",
    "en": "QLoRA of Llama 3.1 70B on 10k examples: is a single RTX 4090 enough?",
}
TWO_OF_THEM = {"it": "e con due 4090?", "id": "kalau dua 4090?", "en": "and with two 4090s?"}
AT_MINIMUM = {
    "it": "quindi che GPU serve come minimo?",
    "id": "jadi minimal pakai GPU apa?",
    "en": "so what GPU would I need at minimum?",
}
SMALLEST_LINE = {
    "it": "La GPU più piccola su cui entra",
    "id": "GPU terkecil yang memuat",
    "en": "The smallest GPU this job fits on",
}


def _no(advisor: Advisor, message: str) -> dict:
    """The first turn, checked to be a fit "no" with a rental shown."""
    first = advisor.respond(message)
    assert first["verdict"]["answer"] == "no" and first["offers"], first["answer"]
    return first


@pytest.mark.parametrize("language", FULL_8B_ONE_H100)
def test_a_method_on_a_card_after_a_fit_no_is_a_fit_what_if_on_that_card(advisor: Advisor, language: str) -> None:
    first = _no(advisor, FULL_8B_ONE_H100[language])
    turn = advisor.respond(LORA_ON_ONE_H100[language], thread_id=first["thread_id"])
    assert turn["spec"] == first["spec"], turn["answer"]  # answered as the what-if it asks (the act read: why-not)
    assert turn["verdict"]["answer_kind"] == "yes_no" and turn["verdict"]["answer"] == "yes", turn["answer"]
    assert (turn["verdict"]["gpu"], turn["verdict"]["count"]) == ("H100", 1), turn["answer"]


@pytest.mark.parametrize("language", QLORA_70B_ONE_4090)
def test_a_count_of_the_card_after_a_fit_no_is_a_fit_what_if_on_that_count(advisor: Advisor, language: str) -> None:
    first = _no(advisor, QLORA_70B_ONE_4090[language])
    turn = advisor.respond(TWO_OF_THEM[language], thread_id=first["thread_id"])
    head = turn["answer"].split("\n")[0]
    assert turn["act"] == "what_if" and turn["spec"] == first["spec"], turn["answer"]
    assert turn["verdict"]["answer_kind"] == "yes_no" and "RTX4090" in head, turn["answer"]


@pytest.mark.parametrize("language", QLORA_70B_ONE_4090)
def test_the_gpu_needed_at_minimum_is_the_smallest_gpu(advisor: Advisor, language: str) -> None:
    first = _no(advisor, QLORA_70B_ONE_4090[language])
    turn = advisor.respond(AT_MINIMUM[language], thread_id=first["thread_id"])
    assert turn["act"] == "inverse" and turn["spec"] == first["spec"], turn["answer"]
    assert turn["answer"].startswith(SMALLEST_LINE[language]), turn["answer"]


DEFINITION = {
    "it": "In breve, cos'è il gradient checkpointing? A cosa serve?",
    "id": "Apa itu gradient checkpointing sebenarnya? Buat apa?",
    "en": "Quick one: what is gradient checkpointing? What is it for?",
}


@pytest.mark.parametrize("language", DEFINITION)
def test_a_definition_of_a_term_of_several_words_after_a_fit_answer_is_a_faq(advisor: Advisor, language: str) -> None:
    first = _no(advisor, QLORA_70B_ONE_4090[language])
    turn = advisor.respond(DEFINITION[language], thread_id=first["thread_id"])
    assert turn["act"] == "faq" and turn["spec"] == first["spec"], turn["answer"]
    assert turn["citations"], turn["answer"]


COST_AFTER_FIT = {
    "it": ("LoRA su Llama 3.1 8B, 20mila esempi", "ci sta su una T4?", "e con contesto 1024, quanto costerebbe?"),
    "id": ("LoRA Llama 3.1 8B, 20 ribu contoh", "muat di T4 nggak?", "kalau konteks 1024, biayanya jadi berapa?"),
    "en": (
        "LoRA on Llama 3.1 8B, 20k examples",
        "would it fit on a T4?",
        "and with a 1024 context, what would it cost?",
    ),
}


@pytest.mark.parametrize("language", COST_AFTER_FIT)
def test_a_cost_what_if_after_a_fit_what_if_is_about_the_plan_not_the_card(advisor: Advisor, language: str) -> None:
    job, fit, cost = COST_AFTER_FIT[language]
    first = advisor.respond(job)
    asked = advisor.respond(fit, thread_id=first["thread_id"])
    assert asked["verdict"]["answer"] == "no" and "T4" in asked["answer"].split("\n")[0], asked["answer"]
    turn = advisor.respond(cost, thread_id=first["thread_id"])
    assert turn["act"] == "what_if" and turn["spec"] == first["spec"], turn["answer"]
    assert turn["verdict"]["answer_kind"] != "yes_no" and turn["verdict"]["gpu"] not in (None, "T4"), turn["answer"]
    assert re.search(r"1[.,]?024", turn["answer"]), turn["answer"]


SPOT_AFTER_A_COUNT = {
    "it": ("QLoRA su Mistral 7B, 3000 esempi: basta una T4?", "e con due T4?", "e con le spot, conviene?"),
    "id": ("QLoRA Mistral 7B, 3000 contoh: cukup satu T4?", "kalau dua T4?", "kalau pakai spot, lebih hemat?"),
    "en": ("QLoRA on Mistral 7B, 3000 examples: is one T4 enough?", "and two T4s?", "and on spot, is it worth it?"),
}


@pytest.mark.parametrize("language", SPOT_AFTER_A_COUNT)
def test_spot_after_fit_what_ifs_is_the_spot_delta_of_the_plan(advisor: Advisor, language: str) -> None:
    job, two, spot = SPOT_AFTER_A_COUNT[language]
    first = advisor.respond(job)
    assert first["verdict"]["answer"] == "yes", first["answer"]
    advisor.respond(two, thread_id=first["thread_id"])
    turn = advisor.respond(spot, thread_id=first["thread_id"])
    assert turn["spec"] == first["spec"] and turn["verdict"]["answer_kind"] == "delta", turn["answer"]


@pytest.mark.parametrize(
    ("language", "text", "defines"),
    [
        ("en", "what is tensor parallelism?", True),
        ("en", "what are spot instances?", True),
        ("it", "cos'è la mixed precision?", True),
        ("en", "what's blocking me?", False),  # a question about the plan, not a term
        ("en", "what's a good GPU?", False),
        ("it", "cos'è una buona GPU?", False),
        ("en", "what is the plan?", False),
    ],
)
def test_a_definition_names_a_term_not_the_plan(language: str, text: str, defines: bool) -> None:
    from agent.graph.acts.classify import has

    assert has("definition", text, language) is defines
