"""'What is ZeRO-3?' asked in a job thread is a question about the term, answered from the knowledge base with its
source, in the thread's language; the job is kept. It was declined as off-topic (en, id) or answered with the plan
(it). Questions about the plan itself ("what is the total?", "what's the plan?") stay questions about the plan."""

from __future__ import annotations

import pytest

JOBS = {
    "en": "LoRA on Llama 3.1 8B, 20k examples, spot ok",
    "it": "LoRA su Llama 3.1 8B, 20k esempi, spot ok",
    "id": "LoRA pada Llama 3.1 8B, 20 ribu contoh, boleh spot",
}
DEFINITIONS = [
    ("en", "what is ZeRO-3?", "ZeRO"),
    ("en", "what's NVLink?", "NVLink"),
    ("en", "what does FSDP mean?", "FSDP"),
    ("it", "cos'è FSDP?", "FSDP"),
    ("it", "che cosa significa NVLink?", "NVLink"),
    ("id", "apa itu ZeRO-3?", "ZeRO"),
    ("id", "apa artinya FSDP?", "FSDP"),
]
SOURCES = {"en": "Source", "it": "Fonte", "id": "Sumber"}
PLAN_QUESTIONS = [("en", "what is the total?"), ("en", "what's the plan?"), ("it", "qual è il totale?")]


@pytest.mark.parametrize(("language", "question", "term"), DEFINITIONS)
def test_a_definition_in_a_job_thread_is_answered_from_the_knowledge_base(advisor, language, question, term):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(question, thread_id=first["thread_id"])
    assert result["act"] == "faq", result["answer"]
    assert result["language"] == language
    assert term in result["answer"] and SOURCES[language] in result["answer"], result["answer"]
    again = advisor.respond("ok", thread_id=first["thread_id"])
    assert again["spec"] == first["spec"]


@pytest.mark.parametrize(("language", "question"), PLAN_QUESTIONS)
def test_a_question_about_the_plan_itself_stays_one(advisor, language, question):
    first = advisor.respond(JOBS[language])
    result = advisor.respond(question, thread_id=first["thread_id"])
    assert result["act"] == "question", result["answer"]
