"""Region wishes as people write them: plural region words ("EU regions", "regioni UE", "regioni europee"), elided
Italian prepositions ("dall'Europa", "nell'UE"), and lifting them ("no region constraints any more", "nessun vincolo
di regione", "tidak ada batasan region")."""

from __future__ import annotations

import pytest

from agent.parsing.parse import parse_message

WISHES = [
    ("en", "only EU regions please", "eu"),
    ("en", "we need US regions", "united states"),
    ("it", "solo regioni UE", "eu"),
    ("it", "i dati non possono uscire dall'Europa", "europe"),
    ("it", "solo regioni europee", "europe"),
    ("it", "tienilo nell'UE", "eu"),
    ("id", "pakai regions Eropa saja", "europe"),
]
LIFTS = [
    ("en", "update: no region constraints any more"),
    ("it", "aggiornamento: non abbiamo più vincoli di regione"),
    ("it", "nessun vincolo sulla regione"),
    ("id", "sekarang tidak ada batasan region lagi"),
]


@pytest.mark.parametrize(("language", "text", "region"), WISHES)
def test_a_region_wish_is_read(language, text, region):
    parsed = parse_message(text, lang=language, use_llm=False)
    assert parsed.spec.regions == [region], parsed.spec.regions


@pytest.mark.parametrize(("language", "lift"), LIFTS)
def test_lifting_the_region_wish_clears_it(advisor, language, lift):
    job = {
        "en": "LoRA on Llama 3.1 8B, 20k examples, in Europe",
        "it": "LoRA su Llama 3.1 8B, 20k esempi, in Europa",
        "id": "LoRA Llama 3.1 8B, 20 ribu contoh, di Eropa",
    }[language]
    first = advisor.respond(job)
    assert first["spec"]["regions"] == ["europe"]
    result = advisor.respond(lift, thread_id=first["thread_id"])
    assert result["act"] == "change" and result["spec"]["regions"] is None, result["answer"]
