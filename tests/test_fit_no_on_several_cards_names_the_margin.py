"""A "no" for several cards whose memory is above what the job needs, but not above it once the safety margin is
kept free, says so, as the one-card answer does: it said "No — it needs about 43.2 GiB per GPU, and each GPU of 2×
L40S has 45.0 GiB", a sentence that contradicts itself. Found trying the chat in Italian; sentences written for this
test, in it/id/en."""

from __future__ import annotations

import re

import pytest

from agent.service import Advisor

CASES = {
    "it": (
        "QLoRA su Gemma 2 27B, 5000 verbali da 6000 token ciascuno: basta una scheda da 48GB?",
        "e con due L40S?",
        "utilizzabili",
    ),
    "id": (
        "QLoRA Gemma 2 27B, 5000 transkrip masing-masing 6000 token: cukup satu kartu 48GB?",
        "kalau dua L40S?",
        "bisa dipakai",
    ),
    "en": (
        "QLoRA on Gemma 2 27B, 5000 transcripts of 6000 tokens each: is a single 48GB card enough?",
        "and with two L40S?",
        "usable",
    ),
}


def _figures(line: str) -> list[float]:
    """The GiB figures a line gives, in order."""
    return [float(n.replace(",", ".")) for n in re.findall(r"(\d+(?:[.,]\d+)?)\s*GiB", line)]


@pytest.mark.parametrize("language", CASES)
def test_a_no_for_several_cards_within_the_margin_names_the_usable_memory(advisor: Advisor, language: str) -> None:
    job, two, usable = CASES[language]
    first = advisor.respond(job)
    turn = advisor.respond(two, thread_id=first["thread_id"])
    head = turn["answer"].split("\n")[0]
    assert turn["verdict"]["answer"] == "no", turn["answer"]
    needed, card = _figures(head)[:2]
    assert needed <= card, head  # the case this test is about: under the card, over the margin
    assert usable in head, head
