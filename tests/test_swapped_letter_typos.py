"""Words typed with two neighbouring letters swapped are read as the word the readers listen for ("waht about",
"2 epocsh", "20 ribu cotnoh"), in the parser and in the act reader alike; words of the three languages and words
the readers know are never changed, and nothing but letters moves. Sentences written for this test."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.language import untangled
from agent.parsing import parse_message


@pytest.mark.parametrize(
    ("text", "field", "value"),
    [
        ("LoRA su Llama 3.1 8B, 20k esmepi", "dataset_examples", 20_000),
        ("LoRA Llama 3.1 8B, 20 ribu cotnoh", "dataset_examples", 20_000),
        ("LoRA on Llama 3.1 8B, 20k exmaples, 3 epcohs", "epochs", 3.0),
        ("LoRA su Llama 3.1 8B, 3 epcohe", "epochs", 3.0),
    ],
)
def test_a_swapped_letter_unit_is_read(text, field, value):
    assert getattr(parse_message(text).spec, field) == value


@pytest.mark.parametrize(
    "text", ["il tema della tesi", "un modello piccolo", "pakai kartu saya", "the same as before", "LoRA on 8 GPUs"]
)
def test_words_of_the_languages_are_left_alone(text):
    assert untangled(text) == text


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("abcdehiklmnoprstuwy 0123456789.,?àè"), max_size=60))
def test_only_letters_move_and_a_second_pass_changes_nothing(text):
    once = untangled(text)
    assert len(once) == len(text)
    assert [c for c in once if not c.isalpha()] == [c for c in text if not c.isalpha()]
    assert untangled(once) == once


@pytest.mark.parametrize(
    ("language", "job", "typo", "act"),
    [
        ("en", "LoRA on Llama 3.1 8B, 10k examples", "waht if we use QLoRA insetad?", "what_if"),
        ("it", "LoRA su Llama 3.1 8B, 10k esempi", "e con 3 epcohe quanto csota?", "what_if"),
        ("id", "LoRA Llama 3.1 8B, 10 ribu contoh", "kalua pakai 3 epoch berapa?", "what_if"),
    ],
)
def test_a_typo_in_a_cue_word_keeps_the_act(advisor, language, job, typo, act):
    first = advisor.respond(job)
    turn = advisor.respond(typo, thread_id=first["thread_id"])
    assert turn["act"] == act and turn["spec"] == first["spec"], turn["answer"]
