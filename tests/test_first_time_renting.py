"""A first-time renter's "una GPU" is not a GPU count: "è la prima volta che noleggio una GPU", "I've never rented a
GPU", "belum pernah sewa GPU" describe the user, so the job they then state is not pinned to one GPU (a 70B full
fine-tune found no offer); a count stated for the job still is."""

from __future__ import annotations

import pytest

from agent.parsing import parse_message

FIRST_TIME = [
    "è la prima volta che noleggio una GPU: vorrei fare full fine-tuning di Llama 3.1 70B",
    "non ho mai noleggiato una GPU, LoRA su Llama 3.1 8B",
    "first time renting a single GPU, full fine-tune of Llama 3.1 70B",
    "I've never rented one GPU in my life... LoRA on Llama 3.1 8B please",
    "pertama kali sewa satu GPU nih, full fine-tuning Llama 3.1 70B",
    "belum pernah sewa sebuah GPU, LoRA Llama 3.1 8B",
]


@pytest.mark.parametrize("text", FIRST_TIME)
def test_a_first_time_renters_gpu_is_no_count(text):
    spec = parse_message(text).spec
    assert spec.num_gpus is None and spec.model is not None, spec


@pytest.mark.parametrize(
    "text",
    [
        "è la prima volta che noleggio, mi basta una GPU per LoRA su Llama 3.1 8B",
        "first time renting: LoRA on Llama 3.1 8B on one GPU",
    ],
)
def test_a_count_stated_for_the_job_stays(text):
    assert parse_message(text).spec.num_gpus == 1


def test_the_first_time_renters_job_gets_a_plan(advisor):
    result = advisor.respond(FIRST_TIME[0])
    assert result["act"] == "new_job" and result["offers"], result["answer"]
