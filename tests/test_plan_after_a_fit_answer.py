"""After a first message's fit question, "the plan" of the next turns is the rental that answer showed. The card a
fit question asks about is its subject, not a wish: a "no" is answered with what does run the job, and a "yes" for
another card than the named GPU with that card. Found trying the chat: after "is a single 48GB card enough?" was
answered "No ... to run it, rent 4x L40S", "why not the H100?" said "H100 is already the plan: 1x H100" and "how long?"
spoke of that H100, a plan the user was never shown (the thread's job still held the asked card, and later turns
ranked with it). Sentences written for this test, in it/id/en."""

from __future__ import annotations

import pytest

from agent.service import Advisor

NO_JOB = {
    "it": "QLoRA su Gemma 2 27B, 4000 verbali da 6000 token l'uno: basta una scheda da 48GB?",
    "id": "QLoRA Gemma 2 27B, 4000 transkrip masing-masing 6000 token, cukup satu kartu 48GB?",
    "en": "QLoRA on Gemma 2 27B, 4000 transcripts of 6000 tokens each: is a single 48GB card enough?",
}
YES_FOR_ANOTHER_CARD = {
    "it": "QLoRA su Gemma 2 27B, 20 milioni di token a 2048: basta una GPU da 48GB o serve una H100?",
    "id": "QLoRA Gemma 2 27B, 20 juta token, seq 2048: cukup satu GPU 48GB, atau harus H100?",
    "en": "QLoRA on Gemma 2 27B, 20M tokens at 2048 tokens: will one 48GB GPU do, or do I need an H100?",
}
YES_FOR_THE_SIZE = {
    "it": "QLoRA su Mistral 7B, 50mila esempi: basta una scheda da 24GB?",
    "id": "QLoRA Mistral 7B, 50 ribu contoh, cukup satu kartu 24GB?",
    "en": "QLoRA on Mistral 7B, 50k examples: is one 24GB card enough?",
}
HOW_LONG = {"it": "quanto ci mette?", "id": "berapa lama?", "en": "how long will it take?"}
WHY_NOT = {"it": "perché non la {gpu}?", "id": "kenapa bukan {gpu}?", "en": "why not the {gpu}?"}
TWO_EPOCHS = {"it": "e con 2 epoche?", "id": "kalau 2 epoch?", "en": "and with 2 epochs?"}
WITH_LORA = {"it": "e con LoRA?", "id": "kalau LoRA?", "en": "and with LoRA?"}
IS_PLAN = {"it": "è già il piano", "id": "sudah menjadi rencana", "en": "is already the plan"}
RENTAL = ("provider", "instance_type", "region", "spot", "total_gpus")


def _rental(offer: dict) -> tuple:
    """What makes two offers the same rental."""
    return tuple(offer.get(key) for key in RENTAL)


def _offer_of(turn: dict, verdict: dict) -> dict:
    """The listed offer a turn's verdict names."""
    return next(
        o for o in turn["offers"] if (o["provider"], o["instance_type"]) == (verdict["provider"], verdict["instance"])
    )


def _fit(advisor: Advisor, message: str, fits: bool) -> dict:
    """The first turn, checked to be the fit answer this test is about."""
    first = advisor.respond(message)
    assert first["verdict"]["answer_kind"] == "yes_no" and first["offers"], first["answer"]
    assert first["verdict"]["answer"] == ("yes" if fits else "no"), first["answer"]
    return first


@pytest.mark.parametrize("language", NO_JOB)
@pytest.mark.parametrize(
    "jobs", [NO_JOB, YES_FOR_ANOTHER_CARD, YES_FOR_THE_SIZE], ids=["no", "yes_for_another_card", "yes_for_the_size"]
)
def test_a_question_after_a_fit_answer_is_about_the_rental_it_showed(
    advisor: Advisor, language: str, jobs: dict[str, str]
) -> None:
    first = _fit(advisor, jobs[language], fits=jobs is not NO_JOB)
    shown = first["verdict"]  # the rental the answer names
    turn = advisor.respond(HOW_LONG[language], thread_id=first["thread_id"])
    assert turn["act"] == "question" and turn["spec"] == first["spec"], turn["answer"]
    assert _rental(turn["offers"][0]) == _rental(_offer_of(first, shown)), (shown, turn["offers"][0])
    assert f"{shown['count']}× {shown['gpu']}" in turn["answer"].split("\n")[0], turn["answer"]


@pytest.mark.parametrize("language", NO_JOB)
@pytest.mark.parametrize("jobs", [NO_JOB, YES_FOR_ANOTHER_CARD], ids=["no", "yes_for_another_card"])
def test_why_not_another_gpu_after_a_fit_answer_weighs_it_against_the_rental_shown(
    advisor: Advisor, language: str, jobs: dict[str, str]
) -> None:
    first = _fit(advisor, jobs[language], fits=jobs is not NO_JOB)
    shown = first["verdict"]
    other = "H100" if shown["gpu"] != "H100" else "A100"
    turn = advisor.respond(WHY_NOT[language].format(gpu=other), thread_id=first["thread_id"])
    head = turn["answer"].split("\n")[0]
    assert IS_PLAN[language] not in head, turn["answer"]
    assert f"{shown['count']}× {shown['gpu']}" in head, turn["answer"]  # the plan it loses to: the one shown


@pytest.mark.parametrize("language", NO_JOB)
def test_the_fit_answers_card_stays_the_subject_of_a_later_fit_what_if(advisor: Advisor, language: str) -> None:
    first = _fit(advisor, NO_JOB[language], fits=False)
    advisor.respond(HOW_LONG[language], thread_id=first["thread_id"])
    turn = advisor.respond(WITH_LORA[language], thread_id=first["thread_id"])
    head = turn["answer"].split("\n")[0]
    assert turn["act"] == "what_if" and turn["verdict"]["answer_kind"] == "yes_no", turn["answer"]
    assert "48" in head and "LoRA" in head, head


@pytest.mark.parametrize("language", NO_JOB)
def test_a_what_if_that_leaves_the_memory_as_it_was_is_about_the_rental_shown(advisor: Advisor, language: str) -> None:
    first = _fit(advisor, NO_JOB[language], fits=False)
    shown = first["offers"][0]
    turn = advisor.respond(TWO_EPOCHS[language], thread_id=first["thread_id"])
    assert turn["act"] == "what_if" and turn["verdict"]["answer_kind"] == "what_if", turn["answer"]
    named = (turn["verdict"]["gpu"], turn["verdict"]["count"])  # the rental the answer names
    assert named == (shown["gpu"], shown["total_gpus"]), turn["answer"]  # epochs scale every offer alike
    assert f"{shown['total_gpus']}× {shown['gpu']}" in turn["answer"], turn["answer"]


ADOPT_AND_UNDO = {
    "it": (
        "Posso fare fine-tuning completo di Llama 3.1 8B su una sola 4090?",
        "e con QLoRA?",
        "ok, fallo",
        "torna a prima",
    ),
    "id": (
        "Bisa full fine-tune Llama 3.1 8B di satu 4090?",
        "kalau pakai QLoRA?",
        "oke, pakai itu",
        "balik ke sebelumnya",
    ),
    "en": ("Can I do a full fine-tune of Llama 3.1 8B on a single 4090?", "and with QLoRA?", "ok, do that", "go back"),
}


@pytest.mark.parametrize("language", ADOPT_AND_UNDO)
def test_adopting_a_yes_on_the_card_rents_it_and_undo_returns_to_the_rental_first_shown(
    advisor: Advisor, language: str
) -> None:
    job, with_qlora, adopt, back = ADOPT_AND_UNDO[language]
    first = _fit(advisor, job, fits=False)
    thread = first["thread_id"]
    what_if = advisor.respond(with_qlora, thread_id=thread)
    assert what_if["verdict"]["answer"] == "yes" and what_if["verdict"]["gpu"] == "RTX4090", what_if["answer"]
    adopted = advisor.respond(adopt, thread_id=thread)
    assert adopted["spec"]["method"] == "qlora" and adopted["offers"][0]["gpu"] == "RTX4090", adopted["answer"]
    undone = advisor.respond(back, thread_id=thread)
    assert undone["act"] == "undo" and undone["spec"] == first["spec"], undone["answer"]
    assert undone["offers"] and _rental(undone["offers"][0]) == _rental(first["offers"][0]), undone["answer"]
