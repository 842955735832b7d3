"""A job's examples size its sequence when the user states no sequence length: an example longer than the default
2,048-token sequence is trained as one sequence (the memory and the plan are those of that length), shorter ones are
packed into default-length sequences; and "N <anything> of M tokens each" counts N items of M tokens whatever the
items are called."""

from __future__ import annotations

from typing import Any

import pytest

from agent.parsing.parse import parse_message
from agent.service import Advisor
from contract.jobspec import JobSpec
from tools.memory import DEFAULTS, example_sequence
from tools.memory.estimator import request_for_spec


def _spec(text: str) -> dict[str, Any]:
    return parse_message(text, use_llm=False).spec.model_dump()


@pytest.mark.parametrize(
    ("text", "examples", "tokens"),
    [
        ("LoRA fine-tune of Llama 3.1 8B on 4,000 chat transcripts of 12k tokens each", 4000, 48_000_000),
        ("QLoRA su Qwen2.5 7B, 1500 contratti da 20000 token l'uno", 1500, 30_000_000),
        ("LoRA Mistral 7B, 800 laporan keuangan masing-masing 9000 token", 800, 7_200_000),
        ("full fine-tune Qwen2.5 1.5B on 25k support tickets of 900 tokens each", 25_000, 22_500_000),
        # a length given as an aside is still one item's
        ("LoRA on Llama 3.1 8B with 6,000 QA pairs (about 400 tokens each)", 6000, 2_400_000),
        ("LoRA su Mistral 7B con 9.000 ricette [in media 350 token]", 9000, 3_150_000),
        ("QLoRA Gemma 2 9B, 5 ribu pasang tanya-jawab (rata-rata 600 token)", 5000, 3_000_000),
    ],
)
def test_a_length_marked_per_item_counts_items_whatever_they_are_called(text: str, examples: int, tokens: int) -> None:
    spec = _spec(text)
    assert (spec["dataset_examples"], spec["dataset_tokens"]) == (examples, tokens)
    assert spec["seq_len"] is None  # the user stated no sequence length


@pytest.mark.parametrize(
    "text",
    [
        "LoRA on Llama 3.1 8B (each example about 700 tokens)",
        "QLoRA su Mistral 7B, esempi brevi (in media 300 token)",
    ],
)
def test_a_marked_length_without_a_count_is_never_the_data_sets_size(text: str) -> None:
    assert _spec(text)["dataset_tokens"] is None


@pytest.mark.parametrize(
    "text",
    [
        "LoRA on Llama 3.1 8B with 8 GPUs of 80 GB each",
        "full fine-tune of Llama 3.1 8B, 2 nodes with 8000 tokens per second each",
        "LoRA Llama 3.1 8B, micro-batch 4 with 2048 tokens each",
        "LoRA su Llama 3.1 8B, batch size 8 da 1024 token l'uno",
        "LoRA Llama 3.1 8B, 3 dengan 512 token masing-masing",
    ],
)
def test_other_units_are_not_items(text: str) -> None:
    assert _spec(text)["dataset_examples"] is None  # a setting's value, or a bare number, counts no items


def test_the_sequence_is_the_examples_length_only_where_they_do_not_fit_the_default() -> None:
    job = {"model": "llama-3.1-8b", "method": "lora", "language": "en"}
    assert example_sequence(JobSpec(**job, dataset_examples=1000, dataset_tokens=12_000_000)) == 12_000
    assert example_sequence(JobSpec(**job, dataset_examples=1000, dataset_tokens=2_049_000)) == 2049
    assert example_sequence(JobSpec(**job, dataset_examples=1000, dataset_tokens=2_048_000)) is None  # packed
    assert example_sequence(JobSpec(**job, dataset_examples=1000, dataset_tokens=700_000)) is None
    assert example_sequence(JobSpec(**job, dataset_tokens=12_000_000)) is None  # no count: no length
    stated = JobSpec(**job, dataset_examples=1000, dataset_tokens=12_000_000, seq_len=4096)
    assert example_sequence(stated) is None  # the user's own sequence length stands
    books = JobSpec(**job, dataset_examples=100, dataset_tokens=50_000_000)  # 500k tokens each: documents, cut
    assert example_sequence(books) is None
    pretrain = JobSpec(params_b=1.0, method="pretrain", language="en", dataset_examples=1000, dataset_tokens=12_000_000)
    assert example_sequence(pretrain) is None


def test_the_estimator_request_takes_the_examples_length_and_says_so() -> None:
    spec = JobSpec(model="llama-3.1-8b", method="lora", language="en", dataset_examples=1000, dataset_tokens=12_000_000)
    request, filled = request_for_spec(spec)
    assert request.seq_len == 12_000
    assert any("12000" in note and "example" in note for note in filled), filled
    assert not any(note.startswith("sequence length not given: 2048") for note in filled)
    short, notes = request_for_spec(spec.model_copy(update={"dataset_tokens": 700_000}))
    assert short.seq_len == DEFAULTS.seq_len and any("2048 tokens assumed" in note for note in notes)


@pytest.mark.parametrize(
    ("text", "stated", "shown"),
    [
        (
            "LoRA on Llama 3.1 8B, 3,000 legal briefs of 16k tokens each",
            "LoRA on Llama 3.1 8B, 3,000 legal briefs of 16k tokens each, sequence length 16000",
            "16,000",
        ),
        (
            "LoRA su Llama 3.1 8B, 3000 sentenze da 16000 token l'una",
            "LoRA su Llama 3.1 8B, 3000 sentenze da 16000 token l'una, sequenze da 16000 token",
            "16.000",
        ),
        (
            "LoRA Llama 3.1 8B, 3000 putusan pengadilan masing-masing 16000 token",
            "LoRA Llama 3.1 8B, 3000 putusan pengadilan masing-masing 16000 token, panjang sekuens 16000 token",
            "16.000",
        ),
    ],
)
def test_a_turn_plans_long_examples_at_their_length(advisor: Advisor, text: str, stated: str, shown: str) -> None:
    implied, explicit = advisor.respond(text), advisor.respond(stated)
    assert implied["spec"]["seq_len"] is None and explicit["spec"]["seq_len"] == 16_000
    # the memory and the plan are those of 16k-token sequences, as if the user had said so
    assert implied["estimate"]["per_gpu_gib"] == explicit["estimate"]["per_gpu_gib"]
    assert implied["offers"][0]["instance_type"] == explicit["offers"][0]["instance_type"]
    assert implied["offers"][0]["est_hours"] == pytest.approx(explicit["offers"][0]["est_hours"])
    default = advisor.respond(text.split(",")[0] + ", sequence length 2048")
    assert implied["estimate"]["per_gpu_gib"] > default["estimate"]["per_gpu_gib"]
    assert shown in implied["answer"]  # the answer says which sequence it planned


def test_short_examples_are_packed_into_the_default_sequence(advisor: Advisor) -> None:
    implied = advisor.respond("LoRA on Llama 3.1 8B, 20k examples of 700 tokens each")
    explicit = advisor.respond("LoRA on Llama 3.1 8B, 20k examples of 700 tokens each, sequence length 2048")
    assert implied["estimate"]["per_gpu_gib"] == explicit["estimate"]["per_gpu_gib"]
    assert "2,048" in implied["answer"]


@pytest.mark.parametrize(
    "text",
    [
        "QLoRA on Llama 3.1 8B with a 32k context, about 1,000 long documents",
        "QLoRA su Llama 3.1 8B con contesto di 32k token, circa 1.000 documenti lunghi",
        "QLoRA Llama 3.1 8B, konteks 32k token, sekitar 1.000 dokumen panjang",
    ],
)
def test_a_count_after_a_context_is_a_count_not_a_length(text: str) -> None:
    spec = _spec(text)
    assert (spec["seq_len"], spec["dataset_examples"]) == (32_768, 1000)


FOLLOW_UPS = [
    ("LoRA on Llama 3.1 8B, 5000 examples", "actually the examples are about 8k tokens each", "8,000"),
    ("LoRA su Llama 3.1 8B, 5000 esempi", "gli esempi sono di circa 8000 token l'uno", "8.000"),
    ("LoRA Llama 3.1 8B, 5000 contoh", "tiap contoh sekitar 8000 token", "8.000"),
]


@pytest.mark.parametrize(("job", "length", "shown"), FOLLOW_UPS)
def test_a_length_stated_later_sizes_the_jobs_examples(advisor: Advisor, job: str, length: str, shown: str) -> None:
    first = advisor.respond(job)
    after = advisor.respond(length, thread_id=first["thread_id"])
    assert after["act"] == "change", after["answer"][:200]
    assert (after["spec"]["dataset_examples"], after["spec"]["dataset_tokens"]) == (5000, 40_000_000)
    assert shown in after["answer"]  # sequences of 8,000 tokens, one example's average length
    assert after["offers"][0]["est_hours"] > first["offers"][0]["est_hours"]


def test_a_length_stated_later_counts_the_examples_of_a_token_total(advisor: Advisor) -> None:
    first = advisor.respond("LoRA on Llama 3.1 8B, 20M tokens")
    after = advisor.respond("the examples are about 8k tokens each", thread_id=first["thread_id"])
    assert after["act"] == "change"
    assert (after["spec"]["dataset_examples"], after["spec"]["dataset_tokens"]) == (2500, 20_000_000)
    assert "8,000" in after["answer"]  # planned at one example per sequence
