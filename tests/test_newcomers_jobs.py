"""How newcomers name models, sizes and data (classes seen in the tune half of the newcomers blind set; sentences
written for this test, in it/id/en):

- a family and a size said apart ("the llama one, 8B") is the newest registry model of that family at that size,
  said as a guess; a model named with another size apart ("deepseek r1 distill, the 14b", where "deepseek" alone is
  DeepSeek V3) is the model of that name and size: it was DeepSeek V3, 671B, on 192 H200s;
- a size answers an ask-back's "which model?";
- "GPT-2, the smallest one." chooses a model; it is no question about the smallest model;
- "let's try that one" adopts what was offered; "I have a laptop with a 3060, can it cope?" asks about that card;
- a data set sized in bytes of text is its tokens at four bytes per token, and the answer says so.
"""

from __future__ import annotations

import pytest

from agent.parsing import parse_message


@pytest.mark.parametrize(
    ("text", "model"),
    [
        ("the llama one, 8B I think", "llama-3.1-8b"),
        ("Our team wants to fine-tune deepseek r1 distill, the 14b, on support chats", "deepseek-r1-distill-qwen-14b"),
        ("the qwen one, 7B", "qwen2.5-7b"),  # the family first: not DeepSeek's Qwen distill
        ("quello di Mistral, da 7 miliardi", "mistral-7b"),
    ],
)
def test_a_family_or_a_name_with_a_size_said_apart_is_that_model(text, model):
    assert parse_message(text, use_llm=False).spec.model == model


def test_a_family_and_size_guess_is_said_as_a_guess(advisor):
    first = advisor.respond("Hi, I'd love a bot that drafts replies to our customer reviews")
    assert first["act"] == "ask_back"
    job = advisor.respond("the llama one, 8B probably", thread_id=first["thread_id"])
    assert job["act"] == "new_job" and job["spec"]["model"] == "llama-3.1-8b"
    assert "Llama 3.1 8B" in job["answer"].split("\n")[0], job["answer"]


def test_a_size_answers_which_model(advisor):
    first = advisor.respond("Vorrei un assistente che risponda alle email dei clienti come facciamo noi")
    assert first["act"] == "ask_back"
    job = advisor.respond("magari un modello da 3B?", thread_id=first["thread_id"])
    assert job["act"] == "new_job", job["answer"]
    assert job["spec"]["params_b"] == 3.0 and job.get("offers")


@pytest.mark.parametrize(
    ("language", "text", "act", "model"),
    [
        ("it", "Pensavo a GPT-2, il più piccolo.", "new_job", "gpt2"),
        ("en", "What's the smallest model I could fine-tune on one L4?", "inverse", None),
    ],
)
def test_the_smallest_one_of_a_named_model_chooses_it(advisor, language, text, act, model):
    result = advisor.respond(text)
    assert result["act"] == act, result["answer"]
    if model:
        assert result["spec"]["model"] == model


@pytest.mark.parametrize(
    ("language", "job", "what_if", "adopt"),
    [
        ("it", "LoRA su Mistral 7B, 20k esempi", "e con QLoRA?", "sì, proviamo con quella"),
        ("en", "LoRA on Mistral 7B, 20k examples", "what about QLoRA?", "ok, let's try that one"),
        ("id", "LoRA pada Mistral 7B, 20 ribu contoh", "kalau pakai QLoRA?", "oke, coba yang itu aja"),
    ],
)
def test_lets_try_that_one_adopts_the_proposal(advisor, language, job, what_if, adopt):
    first = advisor.respond(job)
    proposed = advisor.respond(what_if, thread_id=first["thread_id"])
    assert proposed["act"] == "what_if" and proposed["spec"]["method"] == "lora"
    adopted = advisor.respond(adopt, thread_id=first["thread_id"])
    assert adopted["act"] == "change", adopted["answer"]
    assert adopted["spec"]["method"] == "qlora"


@pytest.mark.parametrize(
    ("language", "job", "question", "word"),
    [
        ("it", "QLoRA su Llama 3.1 8B, 10k esempi", "ho un portatile con una RTX 4090, ce la fa?", "Sì"),
        ("en", "QLoRA on Llama 3.1 8B, 10k examples", "I have a gaming PC with a 4090, would it be enough?", "Yes"),
    ],
)
def test_ones_own_card_in_a_fit_question_is_asked_about(advisor, language, job, question, word):
    first = advisor.respond(job)
    result = advisor.respond(question, thread_id=first["thread_id"])
    assert result["act"] == "what_if", result["answer"]
    assert result["spec"] == first["spec"]
    assert result["answer"].lstrip("*").startswith(word), result["answer"]


@pytest.mark.parametrize(
    ("language", "text", "tokens"),
    [
        ("en", "the wiki export is about 2 GB of plain text", 500_000_000),
        ("it", "sono circa 300 megabyte di file di testo", 75_000_000),
        ("id", "datanya sekitar 800 MB teks", 200_000_000),
    ],
)
def test_data_sized_in_bytes_of_text_is_read_as_tokens(language, text, tokens):
    result = parse_message(text, lang=language, use_llm=False)
    assert result.spec.dataset_tokens == tokens
    assert result.text_bytes == tokens * 4


def test_the_answer_says_how_bytes_of_text_were_read(advisor):
    first = advisor.respond("LoRA on Mistral 7B")
    result = advisor.respond("our docs come to roughly 2 GB of text", thread_id=first["thread_id"])
    assert result["act"] == "change" and result["spec"]["dataset_tokens"] == 500_000_000
    assert any("2 GB" in note and "4 bytes" in note for note in result["notes"]), result["notes"]


@pytest.mark.parametrize(
    ("text", "field", "value"),
    [
        ("QLoRA on Llama 3.1 8B on a 24 GB card", "gpu_memory_gb", 24.0),  # no text word: a card's memory
        ("The manuals come to about 3 GB of scans", "dataset_examples", None),  # a size, not three manuals
    ],
)
def test_a_size_in_bytes_that_is_no_text_is_not_read_as_data(text, field, value):
    result = parse_message(text, use_llm=False)
    assert getattr(result.spec, field) == value
    assert result.spec.dataset_tokens is None
