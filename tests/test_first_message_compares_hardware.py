"""A first message that asks which of two GPUs (or GPU counts) to rent names them as the question's subject, not as a
wish: the plan is ranked without them, and the answer weighs both, each with its best plan, and says which wins.
Found in the tune half of the hardware-first blind dialogue set: "is renting two 4090s better than one A100 80GB?"
pinned the job to two A100s ("no offer can run this job"), and "one quote for an L40S, one for an A100: which?"
answered with the L40S alone. Each option is weighed at the count named before it. Sentences written for this test,
in it/id/en."""

from __future__ import annotations

import re

import pytest

from agent.service import Advisor

CASES = {
    "it": "LoRA su Qwen3 8B, 20mila esempi da 4096 token: conviene noleggiare due L40S o una H100?",
    "id": "LoRA Qwen3 8B, 20 ribu contoh masing-masing 4096 token: lebih baik sewa dua L40S atau satu H100?",
    "en": "LoRA on Qwen3 8B, 20k examples of 4096 tokens each: is renting two L40S better than one H100?",
}
HOW_LONG = {"it": "quanto ci mette?", "id": "berapa lama?", "en": "how long will it take?"}


@pytest.mark.parametrize("language", CASES)
def test_a_first_message_asking_which_of_two_gpus_weighs_both(advisor: Advisor, language: str) -> None:
    result = advisor.respond(CASES[language])
    assert result["act"] == "new_job" and result["offers"], result["answer"]
    assert result["verdict"]["answer_kind"] == "recommendation", result["answer"]
    weighed = [line for line in result["answer"].split("\n") if line.startswith(("2× L40S:", "1× H100:"))]
    assert len(weighed) == 2, result["answer"]  # each option at the count asked, with its best plan
    assert weighed[0].startswith("2× L40S: 2× L40S ") and weighed[1].startswith("1× H100: 1× H100 "), result["answer"]


@pytest.mark.parametrize("language", CASES)
def test_the_plan_after_a_comparing_first_message_is_the_one_it_showed(advisor: Advisor, language: str) -> None:
    first = advisor.respond(CASES[language])
    turn = advisor.respond(HOW_LONG[language], thread_id=first["thread_id"])
    shown, now = first["offers"][0], turn["offers"][0]
    assert (now["provider"], now["instance_type"]) == (shown["provider"], shown["instance_type"]), turn["answer"]


COST_OF_AN_OPTION = {
    "it": "quanto costerebbe in totale con la H100?",
    "id": "berapa total biayanya kalau pakai H100?",
    "en": "what would the H100 option cost in total?",
}


@pytest.mark.parametrize("language", CASES)
def test_the_cost_of_one_of_the_options_is_its_plan_not_a_fit_answer(advisor: Advisor, language: str) -> None:
    first = advisor.respond(CASES[language])
    turn = advisor.respond(COST_OF_AN_OPTION[language], thread_id=first["thread_id"])
    assert turn["spec"] == first["spec"] and turn["verdict"]["answer_kind"] == "what_if", turn["answer"]
    assert turn["verdict"]["gpu"] == "H100", turn["answer"]


WHICH_TO_TAKE = {
    "it": "Ho due preventivi, uno per una L40S e uno per una H100. Il lavoro è LoRA su Qwen3 8B con 20mila esempi. Quale dei due prendo?",
    "id": "Saya dapat dua penawaran, satu L40S dan satu H100. Kerjaannya LoRA Qwen3 8B, 20 ribu contoh. Pilih yang mana?",
    "en": "I got two offers, one with an L40S and one with an H100. The job is LoRA on Qwen3 8B with 20k examples. Which should I pick?",
}
ONLY_ONE_OF_THEM = {
    "it": "e se avessi solo una L40S?",
    "id": "kalau cuma punya satu L40S?",
    "en": "what if I only had one L40S?",
}


@pytest.mark.parametrize("language", WHICH_TO_TAKE)
def test_asking_which_of_two_quotes_to_take_weighs_both(advisor: Advisor, language: str) -> None:
    result = advisor.respond(WHICH_TO_TAKE[language])
    weighed = [line for line in result["answer"].split("\n") if re.match(r"(?:\d+× )?(?:L40S|H100):", line)]
    assert result["act"] == "new_job" and len(weighed) == 2, result["answer"]


@pytest.mark.parametrize("language", CASES)
def test_a_count_of_a_named_card_is_asked_about_that_card(advisor: Advisor, language: str) -> None:
    first = advisor.respond(CASES[language])
    turn = advisor.respond(ONLY_ONE_OF_THEM[language], thread_id=first["thread_id"])
    head = turn["answer"].split("\n")[0]
    assert turn["spec"] == first["spec"] and turn["verdict"]["answer_kind"] == "yes_no", turn["answer"]
    assert "L40S" in head, turn["answer"]


@pytest.mark.parametrize(
    ("text", "counts"),
    [
        ("is renting three 3090s better than one A100 40GB?", {"RTX3090": 3, "A100-40GB": 1}),
        ("meglio 4x L40S oppure 2 H100?", {"L40S": 4, "H100": 2}),
        ("lebih baik dua A10G atau satu L4?", {"A10G": 2, "L4": 1}),
        ("one with an L40S and one with an H100", {}),  # "an L40S": no count before the card
        ("sequence 2048 on an H100", {}),
    ],
)
def test_the_count_before_each_card_is_read(text: str, counts: dict[str, int]) -> None:
    from agent.graph.acts.gpu_mentions import gpu_counts

    assert gpu_counts(text) == counts
