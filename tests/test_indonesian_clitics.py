"""Indonesian attaches -nya ("the"), -ku ("my"), -mu ("your") to the word before: "budgetnya jadi 800rb" is the
budget, as "budget 800rb" is; "anggaranku 2 juta", "tenggatnya 2 hari" likewise. The parser read nothing in them."""

from __future__ import annotations

import pytest

from agent.parsing.parse import parse_message

CASES = [
    ("oke ganti, budgetnya jadi 800rb aja", "budget", {"amount": 800_000.0, "currency": "IDR"}),
    ("anggaranku cuma 2 juta", "budget", {"amount": 2_000_000.0, "currency": "IDR"}),
    ("budgetku maksimal 1,5 jt", "budget", {"amount": 1_500_000.0, "currency": "IDR"}),
]


@pytest.mark.parametrize(("text", "field", "value"), CASES)
def test_a_keyword_with_a_clitic_is_still_the_keyword(text, field, value):
    parsed = parse_message(text, lang="id", use_llm=False)
    assert field in parsed.mentioned, parsed.spec
    assert getattr(parsed.spec, field).model_dump() == value


def test_words_that_only_end_like_a_clitic_are_not_read_as_keywords():
    """'hanya' (only) and 'punya' (have) end in -nya but are no budget word."""
    parsed = parse_message("saya hanya punya 3 GPU", lang="id", use_llm=False)
    assert "budget" not in parsed.mentioned
