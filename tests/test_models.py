"""Model registry: parameter counts from the architecture match published totals; lookup is forgiving."""

import json

import pytest

from tools.models.registry import all_models, fuzzy_lookup, generic_decoder, load_hf_config, lookup, resolve

PUBLISHED_TOTALS = {
    # ../shared/reference/memory-formulas.md §4 (vendor totals / torchtune / llama-recipes prints), HF for GPT-2/BERT.
    "llama-2-7b": 6_738_415_616,
    "llama-2-13b": 13_015_864_320,
    "llama-2-70b": 68_976_648_192,
    "llama-3.1-8b": 8_030_261_248,
    "llama-3.1-70b": 70_553_706_496,
    "llama-3.1-405b": 405_853_388_800,
    "llama-3.2-1b": 1_235_814_400,
    "llama-3.2-3b": 3_212_749_824,
    "mistral-7b": 7_241_732_096,
    "mixtral-8x7b": 46_702_792_704,
    "qwen2.5-0.5b": 494_032_768,
    "qwen2.5-1.5b": 1_543_714_304,
    "qwen2.5-3b": 3_085_938_688,
    "qwen2.5-7b": 7_615_616_512,
    "qwen2.5-14b": 14_770_033_664,
    "qwen2.5-32b": 32_763_876_352,
    "qwen2.5-72b": 72_706_203_648,
    "gemma-2-2b": 2_614_341_888,
    "gemma-2-9b": 9_241_705_984,
    "gemma-2-27b": 27_227_128_320,
    "phi-3-mini": 3_821_079_552,
    "gpt2": 124_439_808,
    "gpt2-medium": 354_823_168,
    "gpt2-large": 774_030_080,
    "gpt2-xl": 1_557_611_200,
    "bert-base": 109_482_240,
    "bert-large": 335_141_888,
}


PUBLISHED_HEADLINES = {
    # id: (published total, relative tolerance, where it is published). Totals from the model cards / HF Hub
    # parameter counts; multimodal headlines include the vision tower, which the text-only shape leaves out.
    "qwen3-0.6b": (0.596e9, 0.005, "Qwen/Qwen3-0.6B card: 0.6B, 0.44B non-embedding"),
    "qwen3-1.7b": (1.72e9, 0.01, "Qwen/Qwen3-1.7B card: 1.7B, 1.4B non-embedding"),
    "qwen3-4b": (4.02e9, 0.01, "Qwen/Qwen3-4B card: 4.0B, 3.6B non-embedding"),
    "qwen3-8b": (8.19e9, 0.005, "Qwen/Qwen3-8B card: 8.2B, 6.95B non-embedding"),
    "qwen3-14b": (14.77e9, 0.005, "Qwen/Qwen3-14B card: 14.8B, 13.2B non-embedding"),
    "qwen3-32b": (32.76e9, 0.005, "Qwen/Qwen3-32B card: 32.8B, 31.2B non-embedding"),
    "qwen3-30b-a3b": (30.5e9, 0.005, "Qwen/Qwen3-30B-A3B card: 30.5B total, 3.3B activated"),
    "qwen3-235b-a22b": (235e9, 0.005, "Qwen/Qwen3-235B-A22B card: 235B total, 22B activated"),
    "llama-4-scout": (109e9, 0.015, "meta-llama/Llama-4-Scout-17B-16E card: 109B total incl. vision, 17B active"),
    "llama-4-maverick": (400e9, 0.005, "meta-llama/Llama-4-Maverick-17B-128E card: 400B total, 17B active"),
    "mistral-nemo-12b": (12.25e9, 0.005, "mistralai/Mistral-Nemo-Base-2407 Hub: 12.2B"),
    "mistral-small-24b": (23.57e9, 0.005, "mistralai/Mistral-Small-24B-Base-2501 Hub: 23.6B"),
    "mixtral-8x22b": (141e9, 0.005, "mistralai/Mixtral-8x22B-v0.1 announcement: 141B total, 39B active"),
    "gemma-3-1b": (1.0e9, 0.005, "google/gemma-3-1b-pt: 1B (text only)"),
    "gemma-3-4b": (4.3e9, 0.11, "google/gemma-3-4b-pt Hub: 4.3B incl. the 0.4B SigLIP vision tower"),
    "gemma-3-12b": (12.2e9, 0.05, "google/gemma-3-12b-pt Hub: 12.2B incl. the vision tower"),
    "gemma-3-27b": (27.4e9, 0.02, "google/gemma-3-27b-pt Hub: 27.4B incl. the vision tower"),
    "phi-3-medium": (13.96e9, 0.005, "microsoft/Phi-3-medium-4k-instruct Hub: 14B (13.96B)"),
    "phi-4": (14.66e9, 0.005, "microsoft/phi-4 Hub: 14.7B"),
    "phi-4-mini": (3.84e9, 0.005, "microsoft/Phi-4-mini-instruct card: 3.8B"),
    "deepseek-v2-lite": (15.7e9, 0.005, "deepseek-ai/DeepSeek-V2-Lite card: 15.7B total, 2.4B active"),
    "deepseek-v3": (671e9, 0.002, "deepseek-ai/DeepSeek-V3 card: 671B main model + 14B MTP module, 37B active"),
    "deepseek-r1-distill-qwen-1.5b": (1.78e9, 0.005, "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B Hub: 1.78B"),
    "gpt-oss-20b": (20.9e9, 0.005, "openai/gpt-oss-20b model card: 20.9B total, 3.6B active"),
    "gpt-oss-120b": (116.8e9, 0.005, "openai/gpt-oss-120b model card: 116.8B total, 5.1B active"),
}
PUBLISHED_ACTIVE = {
    # id: (published active parameters, counted with both embeddings unless noted, tolerance)
    "qwen3-30b-a3b": (3.3e9, 0.03),
    "qwen3-235b-a22b": (22e9, 0.03),
    "llama-4-scout": (17e9, 0.02),
    "llama-4-maverick": (17e9, 0.02),
    "mixtral-8x22b": (39e9, 0.02),
    "deepseek-v3": (37e9, 0.02),
}
PUBLISHED_ACTIVE_WITHOUT_INPUT_EMBEDDING = {"gpt-oss-20b": 3.61e9, "gpt-oss-120b": 5.13e9, "deepseek-v2-lite": 2.4e9}


@pytest.mark.parametrize(("model_id", "published"), sorted(PUBLISHED_HEADLINES.items()))
def test_parameter_count_matches_published_headline(model_id, published):
    total, tolerance, _ = published
    assert resolve(model_id).total_params == pytest.approx(total, rel=tolerance)


@pytest.mark.parametrize(("model_id", "published"), sorted(PUBLISHED_ACTIVE.items()))
def test_moe_active_parameters_match_published(model_id, published):
    active, tolerance = published
    arch = resolve(model_id)
    assert arch.active_params == pytest.approx(active, rel=tolerance)
    assert arch.active_params < arch.total_params / 2


@pytest.mark.parametrize(("model_id", "active"), sorted(PUBLISHED_ACTIVE_WITHOUT_INPUT_EMBEDDING.items()))
def test_active_parameters_counted_like_their_cards(model_id, active):
    """OpenAI and DeepSeek-V2 count active parameters without the input embedding (a lookup, not a matmul)."""
    arch = resolve(model_id)
    assert arch.active_params - arch.embedding_params == pytest.approx(active, rel=0.03)


def test_every_registry_model_names_its_source_repository():
    for arch in all_models():
        assert "/" in arch.hf_repo, arch.id


@pytest.mark.parametrize(("model_id", "total"), sorted(PUBLISHED_TOTALS.items()))
def test_parameter_count_matches_published_total(model_id, total):
    assert resolve(model_id).total_params == total


def test_mixtral_active_parameters_are_two_experts():
    assert resolve("mixtral-8x7b").active_params == 12_879_925_248


def test_every_registry_entry_has_a_unique_id():
    ids = [m.id for m in all_models()]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("llama3 8b", "llama-3-8b"),
        ("Llama-3.1-8B-Instruct", "llama-3.1-8b"),
        ("meta-llama/Meta-Llama-3-8B", "llama-3-8b"),
        ("meta-llama/Llama-2-7b-hf", "llama-2-7b"),
        ("Qwen/Qwen2.5-72B-Instruct", "qwen2.5-72b"),
        ("mistralai/Mistral-7B-v0.1", "mistral-7b"),
        ("google/gemma-2-9b-it", "gemma-2-9b"),
        ("microsoft/Phi-3-mini-4k-instruct", "phi-3-mini"),
        ("llama3.1:70b", "llama-3.1-70b"),
        ("bert-large-uncased", "bert-large"),
        ("GPT-2 XL", "gpt2-xl"),
        ("Qwen 7B", "qwen2.5-7b"),
        ("qwen 14b instruct", "qwen2.5-14b"),
        ("Qwen/Qwen3-8B", "qwen3-8b"),
        ("Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b"),
        ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama-4-scout"),
        ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.1-70b"),
        ("google/gemma-3-27b-it", "gemma-3-27b"),
        ("mistralai/Mixtral-8x22B-Instruct-v0.1", "mixtral-8x22b"),
        ("deepseek-ai/DeepSeek-R1", "deepseek-v3"),
        ("deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "llama-3.1-8b"),
        ("deepseek-ai/DeepSeek-V2-Lite", "deepseek-v2-lite"),
        ("microsoft/phi-4", "phi-4"),
        ("openai/gpt-oss-20b", "gpt-oss-20b"),
        ("gpt-oss 120b", "gpt-oss-120b"),
    ],
)
def test_forgiving_lookup(name, expected):
    assert lookup(name).id == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Mistrall 7B", "mistral-7b"),
        ("deepsek r1", "deepseek-v3"),
        ("gemmma 2 9b", "gemma-2-9b"),
        ("lama 3 8b", "llama-3-8b"),
        ("Qwen 2.5 14 B", "qwen2.5-14b"),
        ("Llama-2-7b-chat-hf", "llama-2-7b"),
        ("Qwen3-8B-Base", "qwen3-8b"),
        ("mistral-nemo-instruct-2407", "mistral-nemo-12b"),
    ],
)
def test_misspelt_and_variant_names_find_the_registry_model(name, expected):
    assert fuzzy_lookup(name).id == expected


@pytest.mark.parametrize("name", ["Qwen4-9B", "qwen3 9b", "llama 3 13b", "mistral 8b", "gpt-5", "lora"])
def test_a_fuzzy_match_never_changes_a_size_or_version(name):
    assert fuzzy_lookup(name) is None


def test_unknown_model_error_names_close_matches():
    with pytest.raises(ValueError, match=r"unknown model 'llama-3\.1-9b'.*llama-3\.1-8b"):
        resolve("llama-3.1-9b")


@pytest.mark.parametrize("size", [0.125, 0.35, 1, 7, 13, 70, 175, 1000])
def test_generic_decoder_lands_near_the_requested_size(size):
    arch = generic_decoder(size)
    assert arch.approximate
    assert abs(arch.total_params / (size * 1e9) - 1) < 0.03


def test_hf_config_is_read_as_it_is(tmp_path):
    config = {
        "model_type": "llama",
        "hidden_size": 4096,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "intermediate_size": 14336,
        "vocab_size": 128256,
        "tie_word_embeddings": False,
        "max_position_embeddings": 131072,
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert load_hf_config(tmp_path).total_params == 8_030_261_248
    assert load_hf_config(tmp_path / "config.json").max_context == 131072


def test_gpt2_hf_config(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps(
            {"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12, "vocab_size": 50257, "n_positions": 1024}
        )
    )
    assert load_hf_config(path).total_params == 124_439_808


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"model_type": "llama", "hidden_size": 4096}', "missing 'num_hidden_layers'"),
        (
            (
                '{"model_type": "llama", "hidden_size": -5, "num_hidden_layers": 2, "num_attention_heads": 2, '
                '"vocab_size": 10}'
            ),
            "'hidden_size' must be a positive integer",
        ),
        (
            (
                '{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 6, '
                '"num_key_value_heads": 4, "vocab_size": 10}'
            ),
            "not a multiple",
        ),
        ('{"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10}', "no model_type"),
        (
            '{"model_type": "mamba", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 10}',
            "model_type 'mamba' is not one the estimator can read",
        ),
    ],
)
def test_malformed_config_gives_clear_error(tmp_path, content, message):
    path = tmp_path / "config.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=message):
        load_hf_config(path)


def test_missing_config_file_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="cannot read config file"):
        load_hf_config(tmp_path / "nope.json")


def _config_file(tmp_path, config):
    """Write a config.json and return its path."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return path


@pytest.mark.parametrize(
    ("config", "total"),
    [
        # facebook/opt-1.3b (1,315,758,080: ReLU fc1/fc2, positions offset by 2, tied head); was 1.82 B as a Llama.
        (
            {
                "model_type": "opt",
                "hidden_size": 2048,
                "num_hidden_layers": 24,
                "num_attention_heads": 32,
                "ffn_dim": 8192,
                "vocab_size": 50272,
                "max_position_embeddings": 2048,
                "word_embed_proj_dim": 2048,
                "do_layer_norm_before": True,
            },
            1_315_758_080,
        ),
        # facebook/opt-350m (331,196,416: 512-wide projected embedding, post-LN without a final norm).
        (
            {
                "model_type": "opt",
                "hidden_size": 1024,
                "num_hidden_layers": 24,
                "num_attention_heads": 16,
                "ffn_dim": 4096,
                "vocab_size": 50272,
                "max_position_embeddings": 2048,
                "word_embed_proj_dim": 512,
                "do_layer_norm_before": False,
            },
            331_196_416,
        ),
        # EleutherAI/pythia-1b (1,011,781,632).
        (
            {
                "model_type": "gpt_neox",
                "hidden_size": 2048,
                "num_hidden_layers": 16,
                "num_attention_heads": 8,
                "intermediate_size": 8192,
                "vocab_size": 50304,
                "tie_word_embeddings": False,
            },
            1_011_781_632,
        ),
    ],
)
def test_non_llama_configs_are_read_exactly(tmp_path, config, total):
    assert load_hf_config(_config_file(tmp_path, config)).total_params == total


def test_falcon_7b_config_is_read_as_falcon(tmp_path):
    """tiiuae/falcon-7b: multi-query, parallel attention with one LayerNorm, no biases, tied head: 6.92 B."""
    config = {
        "model_type": "falcon",
        "hidden_size": 4544,
        "num_hidden_layers": 32,
        "num_attention_heads": 71,
        "multi_query": True,
        "parallel_attn": True,
        "bias": False,
        "vocab_size": 65024,
        "new_decoder_architecture": False,
    }
    assert load_hf_config(_config_file(tmp_path, config)).total_params == pytest.approx(6.92e9, rel=0.005)


@pytest.mark.parametrize(
    "model_id", ["qwen3-30b-a3b", "deepseek-v3", "deepseek-v2-lite", "gpt-oss-20b", "llama-4-maverick", "gemma-3-1b"]
)
def test_registry_entries_match_their_config_json(tmp_path, model_id):
    """The registry and the config reader agree: the config.json of each model (as published on the Hub) gives the
    registry's count."""
    configs = {
        "qwen3-30b-a3b": {
            "model_type": "qwen3_moe",
            "hidden_size": 2048,
            "num_hidden_layers": 48,
            "num_attention_heads": 32,
            "num_key_value_heads": 4,
            "head_dim": 128,
            "intermediate_size": 6144,
            "moe_intermediate_size": 768,
            "num_experts": 128,
            "num_experts_per_tok": 8,
            "vocab_size": 151936,
            "tie_word_embeddings": False,
            "mlp_only_layers": [],
            "decoder_sparse_step": 1,
        },
        "deepseek-v3": {
            "model_type": "deepseek_v3",
            "hidden_size": 7168,
            "num_hidden_layers": 61,
            "num_attention_heads": 128,
            "num_key_value_heads": 128,
            "intermediate_size": 18432,
            "moe_intermediate_size": 2048,
            "n_routed_experts": 256,
            "n_shared_experts": 1,
            "num_experts_per_tok": 8,
            "first_k_dense_replace": 3,
            "q_lora_rank": 1536,
            "kv_lora_rank": 512,
            "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64,
            "v_head_dim": 128,
            "vocab_size": 129280,
            "tie_word_embeddings": False,
            "topk_method": "noaux_tc",
        },
        "deepseek-v2-lite": {
            "model_type": "deepseek_v2",
            "hidden_size": 2048,
            "num_hidden_layers": 27,
            "num_attention_heads": 16,
            "num_key_value_heads": 16,
            "intermediate_size": 10944,
            "moe_intermediate_size": 1408,
            "n_routed_experts": 64,
            "n_shared_experts": 2,
            "num_experts_per_tok": 6,
            "first_k_dense_replace": 1,
            "q_lora_rank": None,
            "kv_lora_rank": 512,
            "qk_nope_head_dim": 128,
            "qk_rope_head_dim": 64,
            "v_head_dim": 128,
            "vocab_size": 102400,
            "tie_word_embeddings": False,
        },
        "gpt-oss-20b": {
            "model_type": "gpt_oss",
            "hidden_size": 2880,
            "num_hidden_layers": 24,
            "num_attention_heads": 64,
            "num_key_value_heads": 8,
            "head_dim": 64,
            "intermediate_size": 2880,
            "num_local_experts": 32,
            "num_experts_per_tok": 4,
            "vocab_size": 201088,
            "tie_word_embeddings": False,
            "attention_bias": True,
        },
        "llama-4-maverick": {
            "model_type": "llama4",
            "text_config": {
                "model_type": "llama4_text",
                "hidden_size": 5120,
                "num_hidden_layers": 48,
                "num_attention_heads": 40,
                "num_key_value_heads": 8,
                "head_dim": 128,
                "intermediate_size": 8192,
                "intermediate_size_mlp": 16384,
                "num_local_experts": 128,
                "num_experts_per_tok": 1,
                "interleave_moe_layer_step": 2,
                "vocab_size": 202048,
            },
        },
        "gemma-3-1b": {
            "model_type": "gemma3_text",
            "hidden_size": 1152,
            "num_hidden_layers": 26,
            "num_attention_heads": 4,
            "num_key_value_heads": 1,
            "head_dim": 256,
            "intermediate_size": 6912,
            "vocab_size": 262144,
        },
    }
    arch = load_hf_config(_config_file(tmp_path, configs[model_id]))
    registered = resolve(model_id)
    assert arch.total_params == registered.total_params
    assert arch.active_params == registered.active_params
