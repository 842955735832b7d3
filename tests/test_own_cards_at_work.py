"""Cards the user already has at work (in the lab, the office, on-premises) are their own, like cards at home: no
wish for the cloud search, so the plan is not pinned to renting the same cards. "In laboratorio abbiamo un vecchio
server con 4 V100 ... conviene noleggiare?" rented four V100s in the cloud. Class seen in the tune half of the
hardware-first blind dialogue set; sentences written for this test, in it/id/en."""

from __future__ import annotations

import pytest

from agent.service import Advisor

CASES = {
    "it": "Nel nostro laboratorio abbiamo 2 RTX 3090. Dobbiamo fare QLoRA su Llama 3.1 8B con 10mila esempi: meglio noleggiare?",
    "id": "Di kantor kami ada 2 RTX 3090. Mau QLoRA Llama 3.1 8B, 10 ribu contoh: mending sewa cloud?",
    "en": "We have 2 RTX 3090s in our lab. We need QLoRA on Llama 3.1 8B with 10k examples: should we rent instead?",
}


@pytest.mark.parametrize("language", CASES)
def test_cards_at_work_do_not_pin_the_cloud_plan(advisor: Advisor, language: str) -> None:
    result = advisor.respond(CASES[language])
    assert result["act"] == "new_job" and result["offers"], result["answer"]
    assert result["spec"]["gpu"] is None and result["spec"]["num_gpus"] is None, result["spec"]
    assert result["spec"]["model"] == "llama-3.1-8b" and result["spec"]["dataset_examples"] == 10_000
