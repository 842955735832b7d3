"""A question asking for both ends at once ("which is cheapest and which is fastest?", "qual è la cheapest e quale la
fastest?") names the cheapest plan that fits and the fastest, the job kept; it is never off-topic."""

from __future__ import annotations

import pytest

CASES = [
    ("en", "LoRA on Llama 3.1 8B, 20k examples", "which one is cheapest and which one is fastest?"),
    ("it", "LoRA su Llama 3.1 8B, 20mila esempi", "e tra tutte, qual è la più economica e quale la più veloce?"),
    ("it", "LoRA su Llama 3.1 8B, 20mila esempi", "ok ma la cheapest e la fastest quali sono?"),
    ("id", "LoRA Llama 3.1 8B, 20 ribu contoh", "yang paling murah sama yang paling cepat yang mana?"),
]


@pytest.mark.parametrize(("language", "job", "message"), CASES)
def test_both_ends_are_named(advisor, language, job, message):
    first = advisor.respond(job)
    cheapest, fastest = first["alternatives"]["cheapest"], first["alternatives"]["fastest"]
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["act"] == "question" and result["spec"] == first["spec"], result["answer"]
    for offer in (cheapest, fastest):
        assert f"{offer['total_gpus']}× {offer['gpu']}" in result["answer"], result["answer"]
        assert offer["provider"] in result["answer"], result["answer"]
