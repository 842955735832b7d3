"""Turns of people trading constraints (classes from the trade-offs blind set's tune half; sentences written for this
test): a decision written as a statement is a change even when it opens with a question word ("Meglio passare a 2
epoche."); "what binds?" is answered with the binding limit, or that nothing binds; lifting a provider or region
restriction in a question is a what-if; undo finds the plan by its model size or GPU count, never an ask-back's
half-stated job; "back to my job: what if ...?" is a what-if."""

from __future__ import annotations

import pytest


def _ask(advisor, *turns):
    """Run the turns on one new thread; every result."""
    first = advisor.respond(turns[0])
    results = [first]
    for text in turns[1:]:
        results.append(advisor.respond(text, thread_id=first["thread_id"]))
    return results


@pytest.mark.parametrize(
    ("job", "decision", "field", "value"),
    [
        ("LoRA su Llama 3.1 8B, 20k esempi, 3 epoche", "Meglio passare a 2 epoche.", "epochs", 2.0),
        (
            "LoRA su Llama 3.1 8B, 20k esempi, seq 4096",
            "Meglio accorciare a seq 1024, i testi sono brevi.",
            "seq_len",
            1024,
        ),
        ("LoRA on Llama 3.1 8B, 20k examples, 3 epochs", "Should be 2 epochs then.", "epochs", 2.0),
    ],
)
def test_a_decision_written_as_a_statement_is_a_change(advisor, job, decision, field, value):
    _first, turn = _ask(advisor, job, decision)
    assert turn["act"] == "change" and turn["spec"][field] == value, turn["answer"]


@pytest.mark.parametrize(
    ("job", "question", "words"),
    [
        ("full fine-tune of Mistral 7B, 20k examples, budget $500", "what's the binding constraint?", "Nothing binds"),
        ("LoRA su Mistral 7B, 20k esempi, budget 500 euro", "cosa mi blocca?", "Nessun vincolo"),
        ("LoRA Mistral 7B, 20 ribu contoh, anggaran 5 juta rupiah", "kendalanya apa?", "Tidak ada batasan"),
    ],
)
def test_what_binds_when_nothing_does(advisor, job, question, words):
    first, turn = _ask(advisor, job, question)
    assert turn["act"] == "question" and turn["spec"] == first["spec"] and words in turn["answer"], turn["answer"]


def test_what_binds_when_the_budget_does(advisor):
    first, turn = _ask(
        advisor, "full fine-tune of Llama 3.1 70B on 120k examples, 3 epochs, budget $60", "what's blocking me?"
    )
    assert not first["offers"] and first["binding_limit"] == "budget"
    assert turn["act"] == "question" and "budget" in turn["answer"].lower(), turn["answer"]


@pytest.mark.parametrize(
    ("job", "question", "cleared"),
    [
        (
            "QLoRA su Llama 3.1 8B, 20k esempi, solo su AWS",
            "se togliessimo il vincolo sui provider, quanto costerebbe?",
            "providers",
        ),
        (
            "QLoRA Llama 3.1 8B, 20 ribu contoh, hanya di AWS",
            "kalau boleh provider lain, berapa biayanya?",
            "providers",
        ),
        (
            "QLoRA on Llama 3.1 8B, 20k examples, EU only",
            "if we lifted the EU-only restriction, how much would it cost?",
            "regions",
        ),
    ],
)
def test_lifting_a_restriction_in_a_question_is_a_what_if(advisor, job, question, cleared):
    first, turn = _ask(advisor, job, question)
    assert first["spec"][cleared] and turn["act"] == "what_if" and turn["spec"] == first["spec"], turn["answer"]


def test_undo_never_returns_to_an_ask_backs_half_job(advisor):
    turns = _ask(
        advisor,
        "ho 100 euro, quale GPU mi conviene noleggiare?",
        "QLoRA su Llama 3.1 8B, 20k esempi, seq 4096",
        "Meglio passare a seq 2048.",
        "Ripristina il piano di prima, quello con 4096.",
    )
    assert turns[0]["act"] == "ask_back" and turns[2]["spec"]["seq_len"] == 2048
    assert turns[3]["act"] == "undo" and turns[3]["spec"]["seq_len"] == 4096, turns[3]["answer"]
    assert turns[3]["spec"]["model"] == "llama-3.1-8b"


@pytest.mark.parametrize(
    "back", ["balik ke rencana 8B aja", "torniamo al piano con il modello da 8B", "go back to the 8B plan"]
)
def test_undo_finds_the_plan_by_its_model_size(advisor, back):
    turns = _ask(advisor, "LoRA on Llama 3.1 8B, 20k examples", "switch to Llama 3.2 3B", back)
    assert turns[1]["spec"]["model"] == "llama-3.2-3b"
    assert turns[2]["act"] == "undo" and turns[2]["spec"]["model"] == "llama-3.1-8b", turns[2]["answer"]


def test_back_to_the_job_then_a_what_if_is_a_what_if(advisor):
    turns = _ask(advisor, "LoRA su Llama 3.1 8B, 20k esempi", "Torniamo al mio job: e se portassi la sequenza a 1024?")
    assert turns[1]["act"] == "what_if" and turns[1]["spec"] == turns[0]["spec"], turns[1]["answer"]


@pytest.mark.parametrize(
    ("job", "allow", "question", "word"),
    [
        (
            "pretrain GPT-2 124M from scratch on 10B tokens, seq 1024, micro-batch 64, deadline 3 days",
            "spot is fine",
            "how many interruptions should I expect?",
            "interruption",
        ),
        (
            "pre-train GPT-2 124M dari nol di 10B token, seq 1024, micro-batch 64, deadline 3 hari",
            "oke, spot boleh",
            "kira-kira berapa kali kena interupsi?",
            "interupsi",
        ),
    ],
)
def test_interruptions_asked_on_an_on_demand_plan_name_the_spot_offers(advisor, job, allow, question, word):
    turns = _ask(advisor, job, allow, question)
    plan = turns[1]["offers"][0]
    assert turns[1]["spec"]["interruptible_ok"] is True and not plan["spot"], turns[1]["answer"]
    assert turns[2]["act"] == "question" and word in turns[2]["answer"], turns[2]["answer"]
