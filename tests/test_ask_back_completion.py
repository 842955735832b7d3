"""The message that completes a job the advisor asked about is the thread's first job (act new_job), and what was
said before the ask-back is kept: "what GPU should I rent?" -> "LoRA on a 13B model, 100M tokens" is a new job, not
a change of a job that never had a plan."""

from __future__ import annotations

import pytest

FIRST_JOBS = [
    ("en", "what gpu should i rent?", "oh sorry, LoRA on a 13B model, 100M tokens"),
    ("it", "che gpu devo noleggiare?", "scusa, LoRA su un modello da 13B, 100M token"),
    ("id", "gpu apa yang harus saya sewa?", "maaf, LoRA model 13B, 100 juta token"),
]
PARTIAL = [
    ("en", "LoRA with 100M tokens, budget $50", "Llama 3.1 8B"),
    ("it", "LoRA con 100M token, budget 50 euro", "Llama 3.1 8B"),
    ("id", "LoRA dengan 100 juta token, budget 50 dolar", "Llama 3.1 8B"),
]


@pytest.mark.parametrize(("language", "vague", "job"), FIRST_JOBS)
def test_the_job_after_an_ask_back_is_a_new_job(advisor, language, vague, job):
    first = advisor.respond(vague)
    assert first["act"] == "ask_back"
    result = advisor.respond(job, thread_id=first["thread_id"])
    assert result["act"] == "new_job" and result["offers"], result["answer"]
    assert result["spec"]["method"] == "lora" and result["spec"]["params_b"] == 13


@pytest.mark.parametrize(("language", "partial", "model"), PARTIAL)
def test_the_model_named_after_an_ask_back_completes_the_job_said_before(advisor, language, partial, model):
    first = advisor.respond(partial)
    assert first["act"] == "ask_back"
    result = advisor.respond(model, thread_id=first["thread_id"])
    assert result["act"] == "new_job" and result["offers"], result["answer"]
    spec = result["spec"]
    assert (spec["method"], spec["dataset_tokens"], spec["model"]) == ("lora", 100_000_000, "llama-3.1-8b")
    assert spec["budget"]["amount"] == 50


HEDGED = [
    (
        "en",
        "I'd like to fine-tune a small model, never rented a GPU. Where do I start?",
        "maybe Llama 3.2 1B? heard it's light",
    ),
    (
        "it",
        "vorrei fare fine-tuning di un modello piccolo, non ho mai noleggiato una GPU",
        "forse Qwen 2.5 da 1,5 miliardi? dicono che è leggero",
    ),
    ("id", "mau fine-tuning model kecil, belum pernah sewa GPU", "mungkin Qwen 2.5 1.5B? katanya ringan"),
]


@pytest.mark.parametrize(("language", "vague", "hedged"), HEDGED)
def test_a_model_offered_as_a_question_after_an_ask_back_is_the_job(advisor, language, vague, hedged):
    """The reply to an ask-back may itself be a question ("maybe Llama 3.2 1B?"): with no plan yet, it is the job
    it names, not a what-if about a job that does not exist."""
    first = advisor.respond(vague)
    assert first["act"] == "ask_back", first["answer"]
    result = advisor.respond(hedged, thread_id=first["thread_id"])
    assert result["act"] == "new_job" and result["offers"], result["answer"]
    assert result["spec"]["model"] in ("llama-3.2-1b", "qwen2.5-1.5b")
