"""Classes of phrasing the offline parser reads (issue 23), each with wording of its own and hand-computed values:
number words, per-item lengths, GPUs over nodes, full fine-tuning phrasings, misspelt model names, past jobs."""

from __future__ import annotations

import pytest

from agent.parsing.parse import parse_message

READINGS = [
    # number words in every language
    ("servono ventotto GPU", {"num_gpus": 28}),
    ("pakai tiga puluh dua GPU", {"num_gpus": 32}),
    ("thirty two GPUs please", {"num_gpus": 32}),
    ("sixty-four gpus", {"num_gpus": 64}),
    ("pretrain on half a billion tokens", {"dataset_tokens": 500_000_000}),
    ("pretraining su mezzo miliardo di token", {"dataset_tokens": 500_000_000}),
    ("deadline satu setengah hari", {"deadline_hours": 36}),
    # per-item lengths multiply; a per-item length alone is neither the data set nor seq_len
    ("LoRA, 8k righe da 300 token ciascuna", {"dataset_examples": 8000, "dataset_tokens": 2_400_000}),
    ("3000 documents of about 2k tokens each", {"dataset_examples": 3000, "dataset_tokens": 6_000_000}),
    ("15rb contoh masing-masing 400 token", {"dataset_examples": 15_000, "dataset_tokens": 6_000_000}),
    ("1200 prompts, 256 tokens each", {"dataset_examples": 1200, "dataset_tokens": 307_200}),
    ("about 900 tokens per sample", {"dataset_tokens": None, "seq_len": None}),
    ("4000 examples and 12M tokens in total", {"dataset_examples": 4000, "dataset_tokens": 12_000_000}),
    ("1,5 esempi", {"dataset_examples": None}),
    # GPUs over nodes: N in all; 'x M nodes' and 'M nodes of N' multiply
    ("32 GPU A100 di empat node", {"num_gpus": 32}),
    ("24 H100 spread over 3 nodes", {"num_gpus": 24}),
    ("12 GPU su 3 server", {"num_gpus": 12}),
    ("3 nodes of 4", {"num_gpus": 12}),
    ("4 GPU per nodo, 3 nodi", {"num_gpus": 12}),
    ("3 mesin berisi 4 A100", {"num_gpus": 12}),
    # full fine-tuning as an intensifier next to a fine-tune verb
    ("I want to completely fine-tune gemma 2 2b", {"method": "full_finetune"}),
    ("vorrei affinare integralmente phi-4", {"method": "full_finetune"}),
    ("mau fine-tune sepenuhnya qwen3 4b", {"method": "full_finetune"}),
    # past jobs are not this job
    (
        "last month we spent $2k on 8 V100s. this time: qlora, max $500",
        {"budget": {"amount": 500, "currency": "USD"}, "gpu": None, "num_gpus": None},
    ),
    (
        "l'anno scorso abbiamo usato RunPod con 2 A6000. ora LoRA, 150 euro",
        {"providers": None, "num_gpus": None, "budget": {"amount": 150, "currency": "EUR"}},
    ),
    # a sequence length after fillers is a sequence length, not the data set; "today" alone is no deadline
    ("ok, ma la lunghezza di contesto è in realtà 4096 token", {"seq_len": 4096, "dataset_tokens": None}),
    ("panjang konteks kita sekitar 2048 token", {"seq_len": 2048, "dataset_tokens": None}),
    ("we started today with QLoRA on mistral 7b", {"deadline_hours": None}),
    ("ci serve finito oggi, qlora su mistral 7b", {"deadline_hours": 12}),
    # a value a question asks about is not stated
    ("is 32k context too long for qwen3 8b?", {"seq_len": None, "model": "qwen3-8b"}),
]


@pytest.mark.parametrize(("text", "expected"), READINGS)
def test_reading(text: str, expected: dict) -> None:
    spec = parse_message(text, use_llm=False).spec.model_dump(mode="json")
    for name, value in expected.items():
        assert spec[name] == value, (name, spec[name])


@pytest.mark.parametrize(
    ("text", "model", "guess"),
    [
        ("QLoRA on Mistrall 7B", "mistral-7b", "Mistrall 7B"),
        ("lora su Gemmma 2 9B", "gemma-2-9b", "Gemmma 2 9B"),
        ("LoRA Qwen 2.5 14 B", "qwen2.5-14b", None),
        ("fine-tune meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b", None),
        ("DeepSeek-R1 with LoRA", "deepseek-v3", None),
        ("DeepSeek-R1-Distill-Qwen-7B qlora", "deepseek-r1-distill-qwen-7b", None),
        ("gemma2 9b-it lora", "gemma-2-9b", None),
    ],
)
def test_model_names_and_guesses(text: str, model: str, guess: str | None) -> None:
    result = parse_message(text, use_llm=False)
    assert (result.spec.model, result.model_guess, result.unknown_model) == (model, guess, None)


def test_an_unknown_name_stays_unknown_with_its_size() -> None:
    result = parse_message("LoRA su Qwen4-9B", use_llm=False)
    assert (result.spec.model, result.spec.params_b, result.unknown_model, result.model_guess) == (
        None,
        9,
        "Qwen4-9B",
        None,
    )


def test_llm_regions_need_the_place_in_the_users_words() -> None:
    from agent.llm.parse_evidence import Evidence

    kept, dropped, _, _ = Evidence("LoRA di Eropa, atau server di Jepang", "id").filter(
        {"regions": ["europe", "japan", "asia"]}
    )
    assert kept == {"regions": ["europe", "japan"]} and dropped == []
    assert Evidence("LoRA on llama 3 8b", "en").filter({"regions": ["europe"]})[1] == ["regions"]
