"""Model registry: parameter counts from the architecture match published totals; lookup is forgiving."""

import json

import pytest

from tools.models import all_models, generic_decoder, load_hf_config, lookup, resolve

PUBLISHED_TOTALS = {
    # ../shared/reference/memory-formulas.md §4 (vendor totals / torchtune / llama-recipes prints), HF for GPT-2/BERT.
    "llama-2-7b": 6_738_415_616, "llama-2-13b": 13_015_864_320, "llama-2-70b": 68_976_648_192,
    "llama-3.1-8b": 8_030_261_248, "llama-3.1-70b": 70_553_706_496, "llama-3.1-405b": 405_853_388_800,
    "llama-3.2-1b": 1_235_814_400, "llama-3.2-3b": 3_212_749_824, "mistral-7b": 7_241_732_096,
    "mixtral-8x7b": 46_702_792_704, "qwen2.5-0.5b": 494_032_768, "qwen2.5-1.5b": 1_543_714_304,
    "qwen2.5-3b": 3_085_938_688, "qwen2.5-7b": 7_615_616_512, "qwen2.5-14b": 14_770_033_664,
    "qwen2.5-32b": 32_763_876_352, "qwen2.5-72b": 72_706_203_648, "gemma-2-2b": 2_614_341_888,
    "gemma-2-9b": 9_241_705_984, "gemma-2-27b": 27_227_128_320, "phi-3-mini": 3_821_079_552,
    "gpt2": 124_439_808, "gpt2-medium": 354_823_168, "gpt2-large": 774_030_080, "gpt2-xl": 1_557_611_200,
    "bert-base": 109_482_240, "bert-large": 335_141_888,
}


@pytest.mark.parametrize(("model_id", "total"), sorted(PUBLISHED_TOTALS.items()))
def test_parameter_count_matches_published_total(model_id, total):
    assert resolve(model_id).total_params == total


def test_mixtral_active_parameters_are_two_experts():
    assert resolve("mixtral-8x7b").active_params == 12_879_925_248


def test_every_registry_entry_has_a_unique_id():
    ids = [m.id for m in all_models()]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize(("name", "expected"), [
    ("llama3 8b", "llama-3-8b"), ("Llama-3.1-8B-Instruct", "llama-3.1-8b"),
    ("meta-llama/Meta-Llama-3-8B", "llama-3-8b"), ("meta-llama/Llama-2-7b-hf", "llama-2-7b"),
    ("Qwen/Qwen2.5-72B-Instruct", "qwen2.5-72b"), ("mistralai/Mistral-7B-v0.1", "mistral-7b"),
    ("google/gemma-2-9b-it", "gemma-2-9b"), ("microsoft/Phi-3-mini-4k-instruct", "phi-3-mini"),
    ("llama3.1:70b", "llama-3.1-70b"), ("bert-large-uncased", "bert-large"), ("GPT-2 XL", "gpt2-xl"),
])
def test_forgiving_lookup(name, expected):
    assert lookup(name).id == expected


def test_unknown_model_error_names_close_matches():
    with pytest.raises(ValueError, match="unknown model 'llama-3.1-9b'.*llama-3.1-8b"):
        resolve("llama-3.1-9b")


@pytest.mark.parametrize("size", [0.125, 0.35, 1, 7, 13, 70, 175, 1000])
def test_generic_decoder_lands_near_the_requested_size(size):
    arch = generic_decoder(size)
    assert arch.approximate
    assert abs(arch.total_params / (size * 1e9) - 1) < 0.03


def test_hf_config_is_read_as_it_is(tmp_path):
    config = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
              "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
              "tie_word_embeddings": False, "max_position_embeddings": 131072}
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert load_hf_config(tmp_path).total_params == 8_030_261_248
    assert load_hf_config(tmp_path / "config.json").max_context == 131072


def test_gpt2_hf_config(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12,
                                "vocab_size": 50257, "n_positions": 1024}))
    assert load_hf_config(path).total_params == 124_439_808


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('{"model_type": "llama", "hidden_size": 4096}', "missing 'num_hidden_layers'"),
    ('{"model_type": "llama", "hidden_size": -5, "num_hidden_layers": 2, "num_attention_heads": 2, '
     '"vocab_size": 10}', "'hidden_size' must be a positive integer"),
    ('{"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 6, "num_key_value_heads": 4, '
     '"vocab_size": 10}', "not a multiple"),
])
def test_malformed_config_gives_clear_error(tmp_path, content, message):
    path = tmp_path / "config.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=message):
        load_hf_config(path)


def test_missing_config_file_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="cannot read config file"):
        load_hf_config(tmp_path / "nope.json")
