"""A question typed without its question mark, as chat often is: one that ends on a question word ("klo ga pake
spot brp", "e con 2 GPU costa quanto", "and on spot how much") or an Indonesian question tag ("muat ga") asks; it does
not change the job. A request that only opens with "if" ("kalau bisa pakai H100 aja") still changes it."""

from __future__ import annotations

import pytest

JOBS = {
    "en": "LoRA on Qwen2.5 7B, 20k examples, budget $40",
    "it": "LoRA su Qwen2.5 7B, 20k esempi, budget 40 euro",
    "id": "LoRA pada Qwen2.5 7B, 20 ribu contoh, budget 40 dolar",
}
UNMARKED = [
    ("id", "klo pake spot jadinya brp", "what_if"),
    ("id", "kalau pakai 2 GPU kira-kira berapa", "what_if"),
    ("id", "terus kalau tanpa budget gimana", "what_if"),
    ("it", "e con le spot costa quanto", "what_if"),
    ("it", "e con 2 GPU quanto ci mette", "question"),  # the plan's time on that many GPUs, beside the plan's
    ("en", "and on spot how much", "what_if"),
    ("en", "with 2 GPUs how long", "question"),
]
REQUESTS = [
    ("id", "kalau bisa pakai spot aja"),
    ("it", "se si può, usa le spot"),
    ("en", "if possible use spot"),
    ("it", "usa pure le spot, mi serve quanto prima"),
    ("id", "pakai spot aja, selesai kapan saja oke"),
]


@pytest.mark.parametrize(("language", "message", "act"), UNMARKED)
def test_a_question_without_its_mark_asks_and_keeps_the_job(advisor, language, message, act):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert (result["act"], result["changed"], result["spec"]) == (act, [], first["spec"]), result["answer"]


@pytest.mark.parametrize(("language", "message"), REQUESTS)
def test_a_request_that_opens_with_if_still_changes_the_job(advisor, language, message):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["act"] == "change" and result["changed"], result["answer"]
    assert result["spec"]["interruptible_ok"] is True


SETTING_QUESTIONS = [
    ("en", "how much with QLoRA?", {"method": "qlora"}),
    ("it", "quanto costa con QLoRA?", {"method": "qlora"}),
    ("id", "berapa biayanya pakai QLoRA?", {"method": "qlora"}),
    ("en", "how long on an H100?", {"gpu": "H100"}),
    ("it", "quanto ci mette su una H100?", {"gpu": "H100"}),
    ("id", "berapa lama di H100?", {"gpu": "H100"}),
    ("en", "how much with 2 GPUs?", {"num_gpus": 2}),
]
"""Cost and duration questions that name a setting the plan does not have: the figures must be that setting's."""


def _money(value: float, language: str) -> str:
    """A USD total as the answers write it."""
    return f"${value:.2f}" if language == "en" else f"{value:.2f}".replace(".", ",") + " $"


@pytest.mark.parametrize(("language", "message", "setting"), SETTING_QUESTIONS)
def test_a_cost_or_time_question_with_another_setting_answers_for_that_setting(advisor, language, message, setting):
    from contract.jobspec import JobSpec
    from tools.ranking import rank_offers

    first = advisor.respond(JOBS[language])
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["changed"] == [] and result["spec"] == first["spec"]
    spec = JobSpec(**{**first["spec"], **setting})
    other = rank_offers(spec, db_path=advisor.db_path).offers[0]
    plan = first["offers"][0]
    assert (other.est_cost, other.gpu) != (plan["est_cost"], plan["gpu"]), "the setting should change the plan"
    assert _money(other.est_cost, language) in result["answer"], result["answer"]


@pytest.mark.parametrize(
    ("language", "text", "asks"),
    [
        ("it", "e con le spot costa quanto", True),
        ("it", "mi serve quanto prima", False),
        ("id", "klo ga pake spot brp", True),
        ("id", "muat ga", True),
        ("id", "budget berapa pun oke", False),
        ("id", "selesai kapan saja oke", False),
        ("en", "and on spot how much", True),
        ("en", "use spot", False),
    ],
)
def test_question_words_that_are_part_of_a_statement_do_not_ask(language, text, asks):
    """'quanto prima' (as soon as possible), 'berapa pun' (any amount), 'kapan saja' (any time) state, not ask."""
    from agent.graph.acts.classify import asks_unmarked

    assert asks_unmarked(text, language) is asks


@pytest.mark.parametrize(
    ("language", "message", "act"),
    [
        ("en", "Could I just do this on my desktop's RTX 3060 instead?", "what_if"),
        ("en", "could we use an A100 instead?", "what_if"),
        ("it", "potrei usare una A100 invece?", "what_if"),
        ("en", "can I use an A100 instead?", "change"),
        ("it", "usa una A100 invece", "change"),
    ],
)
def test_a_conditional_asks_and_a_request_changes(advisor, language, message, act):
    """'Could I ...?' / 'potrei ...?' weigh an option (a what-if, the job kept); 'can I use X instead?' asks to switch."""
    first = advisor.respond(JOBS[language])
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["act"] == act, result["answer"]
    if act == "what_if":
        assert result["spec"] == first["spec"]
