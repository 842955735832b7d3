"""Someone else's job asked mid-thread ("a colleague asks which GPU she should rent for her model") asks for that
job's model and keeps the user's own job meanwhile: a question after it is still about the user's plan, a model named
after it starts the other job (the user's plan kept in the history, so "go back" returns to it), and a colleague's
opinion about the user's own job is not someone else's job. Sentences written for this test, in it/id/en."""

from __future__ import annotations

import pytest

THREADS = {
    "en": (
        "LoRA on Mistral 7B, 20k examples",
        "a friend of mine wants to fine-tune something too, which GPU should he rent?",
        "how much does my plan cost?",
        "Llama 3.2 1B with QLoRA",
        "ok, go back to my previous plan",
    ),
    "it": (
        "LoRA su Mistral 7B, 20k esempi",
        "un mio collega vuole fare fine-tuning anche lui, che GPU dovrebbe noleggiare?",
        "quanto costa il mio piano?",
        "Llama 3.2 1B con QLoRA",
        "ok, torna al piano precedente",
    ),
    "id": (
        "LoRA Mistral 7B, 20 ribu contoh",
        "teman saya juga mau fine-tune, sebaiknya dia sewa GPU apa?",
        "rencana saya berapa biayanya?",
        "Llama 3.2 1B pakai QLoRA",
        "oke, balik ke rencana sebelumnya",
    ),
}


@pytest.mark.parametrize("language", THREADS)
def test_someone_elses_job_is_asked_for_and_the_users_job_kept(advisor, language):
    job, other, cost, model, back = THREADS[language]
    first = advisor.respond(job)
    thread = first["thread_id"]
    asked = advisor.respond(other, thread_id=thread)
    assert asked["act"] == "ask_back" and asked["spec"] == first["spec"], asked["answer"]
    own = advisor.respond(cost, thread_id=thread)
    assert own["act"] == "question" and own["spec"] == first["spec"], own["answer"]
    asked = advisor.respond(other, thread_id=thread)
    started = advisor.respond(model, thread_id=thread)
    assert started["act"] == "new_job" and started["spec"]["model"] == "llama-3.2-1b", started["answer"]
    assert started["spec"]["dataset_examples"] is None  # the other person's job, not the user's changed
    returned = advisor.respond(back, thread_id=thread)
    assert returned["act"] == "undo" and returned["spec"] == first["spec"], returned["answer"]


@pytest.mark.parametrize(
    "text",
    ["my colleague wants us to rent on AWS", "my teammate asks if we should rent H100s for this"],
)
def test_a_colleagues_view_of_the_users_own_job_is_no_other_job(advisor, text):
    first = advisor.respond(THREADS["en"][0])
    assert advisor.respond(text, thread_id=first["thread_id"])["act"] != "ask_back"
