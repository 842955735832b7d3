"""Going back to a plan named by what it had ("go back to the QLoRA plan", "torna al full fine-tuning di prima",
"rimetti il piano con le spot") is an undo to the latest earlier plan with that setting, not a change that keeps
everything since: the plan restored is that earlier plan, all its fields. With no such earlier plan it is the
change it names. "Rimetti com'era prima" (put it back as it was) is an undo too."""

from __future__ import annotations

import pytest

from agent.service import Advisor

DIALOGUES = [
    (
        "en",
        ["QLoRA on Llama 3.1 8B, 20k examples, budget $40", "make it full fine-tuning", "and 4 GPUs"],
        "go back to the QLoRA plan",
        0,
    ),
    (
        "it",
        ["Full fine-tuning di Llama 3.2 1B, 50k esempi, budget 30 euro", "passa a LoRA", "usa 2 GPU"],
        "torna al full fine-tuning di prima",
        0,
    ),
    (
        "it",
        ["LoRA su Llama 3.1 8B, 20k esempi, spot ok", "niente spot", "budget 20 euro"],
        "rimetti il piano con le spot",
        0,
    ),
    (
        "id",
        ["QLoRA Llama 3.1 8B, 20 ribu contoh, boleh spot", "ganti ke LoRA", "pakai 2 GPU"],
        "balik ke rencana QLoRA yang tadi",
        0,
    ),
]


def _run(advisor: Advisor, messages: list[str]) -> list[dict]:
    """Every turn's result, in one thread."""
    results = [advisor.respond(messages[0])]
    for message in messages[1:]:
        results.append(advisor.respond(message, thread_id=results[0]["thread_id"]))
    return results


@pytest.mark.parametrize(("language", "messages", "back", "target"), DIALOGUES)
def test_going_back_to_a_named_plan_restores_that_plan(advisor, language, messages, back, target):
    results = _run(advisor, messages)
    result = advisor.respond(back, thread_id=results[0]["thread_id"])
    assert result["act"] == "undo", result["answer"]
    expected = {k: v for k, v in results[target]["spec"].items() if k != "language"}
    assert {k: v for k, v in result["spec"].items() if k != "language"} == expected


@pytest.mark.parametrize(
    ("language", "job", "back"),
    [
        ("en", "QLoRA on Llama 3.1 8B, 20k examples", "go back to the LoRA plan"),
        ("it", "QLoRA su Llama 3.1 8B, 20k esempi", "torna al piano con LoRA di prima"),
    ],
)
def test_a_named_plan_never_had_is_the_change_it_names(advisor, language, job, back):
    first = advisor.respond(job)
    result = advisor.respond(back, thread_id=first["thread_id"])
    assert result["act"] == "change" and result["spec"]["method"] == "lora", result["answer"]


def test_put_it_back_as_it_was_is_an_undo(advisor):
    first = advisor.respond("LoRA su Llama 3.1 8B, 20k esempi")
    changed = advisor.respond("usa 4 GPU", thread_id=first["thread_id"])
    assert changed["spec"]["num_gpus"] == 4
    result = advisor.respond("Mmm costa troppo così, rimetti com'era prima.", thread_id=first["thread_id"])
    assert result["act"] == "undo" and result["spec"] == first["spec"], result["answer"]
