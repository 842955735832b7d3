"""A number the parser reads but cannot use (a negative deadline or budget, a value outside what the job spec
accepts) is never dropped or flipped in silence: the job leaves it out and the answer says which value, in the
user's language."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("language", "message", "field", "written", "word"),
    [
        ("en", "QLoRA on Llama 3 8B, 1M tokens, deadline -5 hours", "deadline_hours", "-5", "deadline"),
        ("it", "QLoRA su Llama 3 8B, 1M di token, scadenza -5 ore", "deadline_hours", "-5", "scadenza"),
        ("id", "QLoRA Llama 3 8B, 1 juta token, tenggat -5 jam", "deadline_hours", "-5", "tenggat"),
        ("en", "QLoRA on Llama 3 8B, 1M tokens, budget -500 dollars", "budget", "-500", "budget"),
        ("it", "QLoRA su Llama 3 8B, 1M di token, budget -500 euro", "budget", "-500", "budget"),
        ("en", "QLoRA on Llama 3 8B, 1M tokens, budget 1e308 usd", "budget", "e+308", "budget"),
        (
            "en",
            "QLoRA on Llama 3 8B, 1M tokens, sequence length 1000000000 tokens",
            "seq_len",
            "1000000000",
            "sequence",
        ),
        ("en", "QLoRA on Llama 3 8B, 10^30 tokens", "dataset_tokens", "1e+30", "dataset"),
        ("it", "QLoRA su Llama 3 8B, 10^30 token", "dataset_tokens", "1e+30", "dataset"),
        ("id", "QLoRA Llama 3 8B, 10^30 token", "dataset_tokens", "1e+30", "dataset"),
    ],
)
def test_an_unusable_value_is_left_out_and_said(advisor, language, message, field, written, word):
    result = advisor.respond(message, language=language)
    assert result["spec"][field] is None, result["spec"][field]  # not flipped to +5 h, not kept
    said = [n for n in result["notes"] if written in n.replace("\u202f", "")]
    assert said and word in said[0].lower(), result["notes"]
    assert result["offers"]  # the rest of the job is still answered
    if field == "seq_len":
        assert result["spec"]["dataset_tokens"] == 1_000_000  # the impossible length is not the data set's size


@pytest.mark.parametrize(
    ("message", "field", "written"),
    [
        ("QLoRA on Llama 3 8B, 10^30 tokens", "dataset_tokens", "1e+30"),
        ("QLoRA on Llama 3 8B, 10**30 tokens", "dataset_tokens", "1e+30"),
        ("QLoRA on Llama 3 8B, 1e30 tokens", "dataset_tokens", "1e+30"),
        ("QLoRA on Llama 3 8B, 2.5E21 tokens", "dataset_tokens", "2.5e+21"),
        ("QLoRA on Llama 3 8B, 10^30 examples", "dataset_examples", "1e+30"),
        ("QLoRA on Llama 3 8B, 1M tokens, 10^30 epochs", "epochs", "1e+30"),
        ("QLoRA on Llama 3 8B, 1M tokens, 20000 epochs", "epochs", "20000"),
        ("QLoRA on Llama 3 8B, 1M tokens, batch size 1e30", "micro_batch_size", "1e+30"),
        ("QLoRA on Llama 3 8B, 1M tokens, 1e30 GPUs", "num_gpus", "1e+30"),
        ("QLoRA on Llama 3 8B, 1M tokens, context 1e30", "seq_len", "1e+30"),
        ("QLoRA on a 1e30B model, 1M tokens", "params_b", "1e+30"),
    ],
)
def test_exponent_notation_is_read_as_a_number_and_refused_by_name_when_out_of_range(message, field, written):
    """10^N, 10**N and 1eN are numbers: an impossible one is refused naming the value (compactly), never ignored."""
    from agent.parsing import parse_message

    result = parse_message(message, lang="en")
    assert getattr(result.spec, field) is None
    assert [r for r in result.refused if r["field"] == field and r["value"] == written], result.refused


def test_exponent_notation_within_range_is_used():
    from agent.parsing import parse_message

    spec = parse_message("QLoRA on Llama 3 8B, 10^9 tokens, 3 epochs, batch size 2^3", lang="en").spec
    assert (spec.dataset_tokens, spec.epochs, spec.micro_batch_size) == (1_000_000_000, 3, 8)
