"""'Why not the L40S?' when the plan already rents an L40S is answered as the plan, not as a lost alternative: asking
about a GPU (or a provider) narrows the job to what its plan already uses, so the same rental is the plan. Found
trying the chat: it said 'L40S is not the pick: Both come out the same for this job. than the plan (1x L40S ...)'."""

from __future__ import annotations

import pytest

from agent.service import Advisor

CASES = [
    ("LoRA on Llama 3.1 8B, 20k examples", "why not the {gpu}?", "is already the plan"),
    ("LoRA su Llama 3.1 8B, 20mila esempi", "perché non la {gpu}?", "è già il piano"),
    ("LoRA Llama 3.1 8B, 20 ribu contoh", "kenapa bukan {gpu}?", "sudah menjadi rencana"),
]


@pytest.mark.parametrize(("job", "question", "is_plan"), CASES)
def test_why_not_the_plans_own_gpu_says_it_is_the_plan(advisor: Advisor, job: str, question: str, is_plan: str) -> None:
    first = advisor.respond(job)
    gpu = first["offers"][0]["gpu"]
    answer = advisor.respond(question.format(gpu=gpu), thread_id=first["thread_id"])
    line = answer["answer"].splitlines()[0]
    assert answer["act"] == "question" and answer["spec"] == first["spec"]
    assert line.startswith(f"{gpu} {is_plan}"), line
