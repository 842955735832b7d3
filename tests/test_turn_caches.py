"""Per-request caches on the turn path give the same answers as computing afresh, turn after turn (issue 14)."""

from __future__ import annotations

import pytest

from agent.graph.job_nodes import estimate_node
from agent.graph.questions import FIT_CHECK_GPU
from agent.parsing.parse import parse_message
from tools.memory.estimator import estimate_for_spec

JOBS = [
    "QLoRA su Llama 3 70B, budget 300 euro, vanno bene le spot?",
    "LoRA pada Mistral 7B, 10 ribu contoh, anggaran 2 juta rupiah",
    "Full fine-tune Llama 3.1 8B on 100M tokens within 24 hours, no spot",
    "pretrain GPT-2 small from scratch on 10B tokens, budget $200",
]


@pytest.mark.parametrize("message", JOBS)
def test_the_estimate_node_matches_a_fresh_estimate_on_every_repeat(message: str) -> None:
    spec = parse_message(message, use_llm=False).spec
    fresh = estimate_for_spec(spec, num_gpus=1, gpu=spec.gpu or FIT_CHECK_GPU).model_dump(mode="json")
    state = {"spec": spec.model_dump(mode="json"), "language": spec.language or "en"}
    for _ in range(3):  # the cached copy must not grow (assumptions added once) nor differ
        assert estimate_node(state)["single_gpu_estimate"] == fresh


def test_jobs_differing_only_in_budget_share_the_estimate_but_not_the_answer() -> None:
    first = parse_message("QLoRA on Llama 3 8B, 10k examples, budget $50", use_llm=False).spec
    second = parse_message("QLoRA on Llama 3 8B, 10k examples, budget $5000", use_llm=False).spec
    one = estimate_node({"spec": first.model_dump(mode="json"), "language": "en"})["single_gpu_estimate"]
    one["assumptions"].append("changed by a caller")
    two = estimate_node({"spec": second.model_dump(mode="json"), "language": "en"})["single_gpu_estimate"]
    assert "changed by a caller" not in two["assumptions"]
    assert two == estimate_for_spec(second, num_gpus=1, gpu=FIT_CHECK_GPU).model_dump(mode="json")
