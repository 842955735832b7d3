"""What visitors of a price-comparison site type into the chat widget (classes seen in the tune half of the widget
blind set; sentences and configs written for this test, in it/id/en):

- a pasted training config ("num_epochs: 2", "adapter: qlora") is read as the job's settings; a generic word for
  adapters beside a named method is that method, not LoRA;
- counted written items with a modifier or two ("12,000 redacted support notes", "3k Q&A pairs", "900 verbali") are
  the example count; "everything but spot" forbids spot;
- "a single run" and "satu kali training" are how often, not a budget;
- a term asked about for someone else ("my team will ask: what's the difference between AdamW and Adafactor?",
  "cos'è la precisione mista, me lo spieghi?") is the FAQ's, the job kept; it was a change of that setting;
- a first message asking what to rent, or what a budget buys, without a model is asked back, its facts kept;
- "is it reliable?", "se si interrompe perdo tutto?", "aman nggak?" ask about the plan; "with the same budget, the
  longest context?" is an inverse question, not off-topic.
"""

from __future__ import annotations

import pytest

from agent.parsing import parse_message

CONFIG = """hi, this is what I run locally, where should I rent it?

base_model: mistralai/Mistral-7B-v0.1
adapter: qlora
num_epochs: 2
sequence_len: 2048
micro_batch_size: 4
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (CONFIG, {"model": "mistral-7b", "method": "qlora", "epochs": 2.0, "seq_len": 2048, "micro_batch_size": 4}),
        ("LoRA on Llama 3 8B over 12,000 redacted support notes", {"dataset_examples": 12000}),
        ("QLoRA Mistral 7B, 3k Q&A pairs", {"dataset_examples": 3000}),
        ("LoRA su Mistral 7B con 900 verbali di riunione", {"dataset_examples": 900}),
        ("LoRA su Mistral 7B, va bene tutto tranne le istanze spot", {"interruptible_ok": False}),
        ("what would a single run cost on Mistral 7B with LoRA?", {"budget": None}),
        ("LoRA Mistral 7B, berapa biaya satu kali training?", {"budget": None}),
    ],
)
def test_what_visitors_paste_and_type_is_read(text, expected):
    spec = parse_message(text, use_llm=False).spec
    assert {name: getattr(spec, name) for name in expected} == expected


@pytest.mark.parametrize(
    ("job", "ask"),
    [
        ("LoRA on Mistral 7B, 20k examples", "my team will ask me: what's the difference between AdamW and Adafactor?"),
        ("LoRA su Mistral 7B, 20mila esempi", "i colleghi chiederanno cos'è la precisione mista, me lo spieghi?"),
    ],
)
def test_a_term_asked_for_someone_else_is_the_faqs(advisor, job, ask):
    first = advisor.respond(job)
    result = advisor.respond(ask, thread_id=first["thread_id"])
    assert result["act"] == "faq" and result["spec"] == first["spec"], result["answer"]


@pytest.mark.parametrize(
    "text",
    [
        "we'd like our interns to fine-tune something small for a demo, what should we be renting?",
        "che GPU dovremmo noleggiare per un corso sul fine-tuning?",
        "cuma ada 500 ribu, kira-kira bisa latih apa ya?",
    ],
)
def test_what_to_rent_without_a_model_is_asked_back(advisor, text):
    result = advisor.respond(text)
    assert result["act"] == "ask_back", result["answer"]


@pytest.mark.parametrize(
    ("job", "ask", "act"),
    [
        ("LoRA on Mistral 7B, 20k examples", "the cheapest provider there, is it reliable?", "question"),
        ("LoRA su Mistral 7B, 20mila esempi", "se si interrompe a metà perdo tutto?", "question"),
        ("LoRA Mistral 7B, 20 ribu contoh", "yang paling murah itu aman nggak?", "question"),
        (
            "LoRA on Mistral 7B, 20k examples, budget $30",
            "with the same budget, what's the longest context I could train with?",
            "inverse",
        ),
    ],
)
def test_worries_and_limits_asked_about_the_plan(advisor, job, ask, act):
    first = advisor.respond(job)
    result = advisor.respond(ask, thread_id=first["thread_id"])
    assert result["act"] == act and result["spec"] == first["spec"], result["answer"]
