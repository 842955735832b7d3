""" "What's the smallest GPU for this?" on a job no single card holds answers with the fewest GPUs that hold it and an
offer at that count, not only "it needs several GPUs"; and an adapter word in a QLoRA thread ("4-bit base,
adapters") restates QLoRA instead of switching the job to LoRA. Sentences written for this test."""

from __future__ import annotations

import re

import pytest

DEEPSEEK_V3_PARAMS = 671e9
"""DeepSeek-V3's parameter count (its model card): its 4-bit weights alone are ~312 GiB."""

QUESTIONS = {
    "en": ("QLoRA on DeepSeek-V3, seq 2048, 50M tokens", "what's the smallest GPU this runs on?"),
    "it": ("QLoRA su DeepSeek-V3, seq 2048, 50M token", "qual è la GPU più piccola su cui gira?"),
    "id": ("QLoRA DeepSeek-V3, seq 2048, 50 juta token", "GPU terkecil yang bisa menjalankan ini apa?"),
}


@pytest.mark.parametrize("language", QUESTIONS)
def test_a_job_no_card_holds_gets_the_fewest_gpus_that_do(advisor, language):
    job, question = QUESTIONS[language]
    first = advisor.respond(job)
    turn = advisor.respond(question, thread_id=first["thread_id"])
    assert turn["act"] == "inverse" and turn["spec"] == first["spec"], turn["answer"]
    found = re.search(r"(\d+)× (\S+) \((\d+) GiB", turn["answer"])
    assert found, turn["answer"]
    count, gpu, vram = int(found.group(1)), found.group(2), int(found.group(3))
    assert count >= 2 and count * vram >= DEEPSEEK_V3_PARAMS * 0.5 / 2**30, turn["answer"]
    offer_line = turn["answer"].split("\n\n")[1]
    assert offer_line.startswith(f"{count}× {gpu}"), turn["answer"]


def test_adapters_named_in_a_qlora_thread_keep_qlora(advisor):
    first = advisor.respond("QLoRA on Llama 3.1 70B, 20k examples")
    turn = advisor.respond(
        "give me the per-GPU memory: 4-bit base, adapters, activations", thread_id=first["thread_id"]
    )
    assert turn["spec"]["method"] == "qlora", turn["answer"]
    changed = advisor.respond("switch to plain LoRA", thread_id=first["thread_id"])
    assert changed["spec"]["method"] == "lora", changed["answer"]


def test_a_job_no_offer_holds_says_how_far_it_looked(advisor):
    first = advisor.respond("full fine-tune Llama 3.1 405B, seq 131072, 1B tokens")
    turn = advisor.respond("what is the smallest GPU this runs on?", thread_id=first["thread_id"])
    assert turn["act"] == "inverse" and "64" in turn["answer"] and "several GPUs" not in turn["answer"], turn["answer"]
