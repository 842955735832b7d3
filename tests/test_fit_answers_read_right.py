"""A fit answer reads right: a "no" whose need is under the card's size names the usable memory the margin leaves (not
"No — it needs 14.4 GiB, and a T4 has 15.0 GiB", which reads as a yes), and a what-if about another model size says
the size, not "model any, model size 70". Sentences written for this test, in it/id/en."""

from __future__ import annotations

import re

import pytest

MARGIN = {
    "en": ("QLoRA Mistral 7B, 10k examples, seq 4096, mbs 2", "would that fit on a T4?", "No"),
    "it": ("QLoRA Mistral 7B, 10k esempi, seq 4096, mbs 2", "ci starebbe sulla T4?", "No"),
    "id": ("QLoRA Mistral 7B, 10 ribu contoh, seq 4096, mbs 2", "muat di T4 ga?", "Tidak"),
}


def _figures(line: str) -> list[float]:
    """The GiB figures of a line, in order (either decimal mark)."""
    return [float(x.replace(",", ".")) for x in re.findall(r"(\d+[.,]\d+) GiB", line)]


@pytest.mark.parametrize("language", MARGIN)
def test_a_no_under_the_cards_size_names_what_is_usable(advisor, language):
    job, question, no = MARGIN[language]
    first = advisor.respond(job)
    head = advisor.respond(question, thread_id=first["thread_id"])["answer"].split("\n")[0]
    assert head.startswith(f"**{no}**"), head
    needed, vram, usable = _figures(head)
    assert usable < needed <= vram, head


@pytest.mark.parametrize(
    ("language", "question"),
    [
        ("en", "Can a single 80 GB GPU hold QLoRA of a 70B model?"),
        ("it", "una sola scheda da 80 GB regge il QLoRA di un modello da 70B?"),
        ("id", "satu GPU 80 GB muat QLoRA model 70B?"),
    ],
)
def test_a_what_if_on_another_model_size_says_the_size(advisor, language, question):
    first = advisor.respond(MARGIN[language][0])
    answer = advisor.respond(question, thread_id=first["thread_id"])["answer"]
    assert "70" in answer.split("\n")[0] and not re.search(r"model any|modello qualsiasi|model bebas", answer), answer


@pytest.mark.parametrize("question", ["Can a single 80 GB GPU hold QLoRA of a 70B model?", "could a 4090 handle it?"])
def test_hold_and_handle_ask_whether_it_fits(advisor, question):
    first = advisor.respond("QLoRA on Llama 3.1 8B, 30k examples")
    turn = advisor.respond(question, thread_id=first["thread_id"])
    assert turn["act"] == "what_if" and turn["answer"].startswith(("**Yes**", "**No**")), turn["answer"]


@pytest.mark.parametrize(
    ("language", "question", "yes"),
    [("en", "would that fit on one T4?", "Yes"), ("it", "ci sta su una T4?", "Sì"), ("id", "muat di satu T4?", "Ya")],
)
def test_a_yes_at_a_lowered_micro_batch_says_so(advisor, language, question, yes):
    first = advisor.respond(MARGIN[language][0])
    head = advisor.respond(question, thread_id=first["thread_id"])["answer"].split("\n")[0]
    assert head.startswith(f"**{yes}**") and "micro-batch 1" in head and "micro-batch 2" in head, head
    fits, stated = _figures(head)[0], _figures(head)[-1]
    assert fits < stated, head
