"""Language detection on short, mixed, jargon-heavy chat messages in Italian, Indonesian and English."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.language.detect import LanguageGuess, detect_language, normalise_language

DETECTED = [
    ("fine-tuning pakai spot aman?", "id"),
    ("QLoRA su Llama 3 70B", "it"),
    ("e se uso le spot?", "it"),
    ("kalau pakai QLoRA?", "id"),
    ("and with 4 GPUs?", "en"),
    ("Voglio fare fine-tuning di Llama 3 8B con LoRA, budget 100 euro", "it"),
    ("Saya mau fine-tune Mistral 7B pakai QLoRA, budget 2 juta rupiah", "id"),
    ("I want to fine-tune Llama 3 8B with LoRA on a budget of $100", "en"),
    ("quanto costa addestrare un modello da 7 miliardi di parametri?", "it"),
    ("berapa biaya melatih model 350 juta parameter?", "id"),
    ("pretraining a 1B model from scratch on 20B tokens", "en"),
    ("posso usare istanze spot?", "it"),
    ("tidak boleh pakai spot", "id"),
    ("preemptible is ok", "en"),
    ("niente istanze interrompibili", "it"),
    ("dalam 3 hari", "id"),
    ("entro due settimane", "it"),
    ("within 12 hours", "en"),
    ("l'addestramento dell'LLM su GPU spot", "it"),
    ("ciao", "it"),
    ("halo", "id"),
    ("hi", "en"),
    ("dua GPU", "id"),
    ("otto GPU", "it"),
    ("fine-tune penuh Llama 3 8B", "id"),
]


@pytest.mark.parametrize(("text", "expected"), DETECTED)
def test_detects_language_of_short_mixed_messages(text: str, expected: str) -> None:
    guess = detect_language(text)
    assert (guess.language, guess.source, guess.supported) == (expected, "detected", True)
    assert guess.confidence > 0


LOAN_PHRASES = [
    ("QLoRA su Mistral 7B, sequence length 8192, budget 80 euro", "it"),
    ("addestro GPT-2 from scratch, va bene on demand", "it"),
    ("Full fine-tuning di Qwen2.5 3B con context length 4096", "it"),
    ("full finetune Gemma 2B, context length 2048, berapa lama?", "id"),
    ("Full fine-tune Phi-3 mini pakai on-demand saja", "id"),
    ("Full fine-tuning of Mistral 7B from scratch on one node", "en"),
    ("what sequence length fits on one A100 for a full fine-tune?", "en"),
]
"""English technical phrases Italian and Indonesian chat borrows whole (full fine-tuning, sequence length, from
scratch, on demand): no cue for English, as single loan words are none; English prose around them still is."""


@pytest.mark.parametrize(("text", "expected"), LOAN_PHRASES)
def test_borrowed_english_phrases_are_not_english_cues(text: str, expected: str) -> None:
    guess = detect_language(text)
    assert (guess.language, guess.source) == (expected, "detected"), guess.scores


@pytest.mark.parametrize("previous", ["it", "id", "en"])
def test_borrowed_phrases_alone_keep_the_previous_language(previous: str) -> None:
    for text in ["full fine-tuning, sequence length 4096", "from scratch, on-demand", "context length 8k"]:
        guess = detect_language(text, previous=previous)
        assert (guess.language, guess.source) == (previous, "previous"), text


@pytest.mark.parametrize("previous", ["it", "id", "en"])
def test_technical_english_words_alone_keep_the_previous_language(previous: str) -> None:
    for text in ["QLoRA Llama 3 70B", "8x H100", "GPU spot budget fine-tuning LoRA", "Rp 5.000.000", "?"]:
        guess = detect_language(text, previous=previous)
        assert (guess.language, guess.source) == (previous, "previous"), text


def test_no_signal_and_no_history_means_english() -> None:
    guess = detect_language("LoRA 8B H100")
    assert (guess.language, guess.confidence) == ("en", 0.0)


def test_clear_text_overrides_the_previous_language() -> None:
    assert detect_language("berapa biaya pakai dua GPU?", previous="it").language == "id"
    assert detect_language("how much would it cost?", previous="id").language == "en"


def test_explicit_choice_wins_over_everything() -> None:
    guess = detect_language("quanto costa?", explicit="Indonesian", previous="en")
    assert (guess.language, guess.source, guess.confidence) == ("id", "explicit", 1.0)


@pytest.mark.parametrize(
    "text",
    [
        "Ich möchte Llama 3 8B mit LoRA trainieren, wie viel kostet das?",
        "Je veux entraîner un modèle de 7 milliards avec LoRA, combien ça coûte ?",
        "Quiero entrenar un modelo de 7B con QLoRA, ¿cuánto cuesta?",
        "Quero treinar um modelo de 7B com LoRA, quanto custa?",
        "Ik wil een model van 7B trainen met LoRA, hoeveel kost dat?",
    ],
)
def test_fourth_language_is_flagged_and_answered_in_english(text: str) -> None:
    guess = detect_language(text, previous="it")
    assert (guess.supported, guess.language) == (False, "en")


def test_italian_with_portuguese_lookalike_words_stays_supported() -> None:
    guess = detect_language("posso usare le spot per il fine-tuning? quanto costa?")
    assert (guess.supported, guess.language) == (True, "it")


@pytest.mark.parametrize(
    ("raw", "code"), [("IT", "it"), ("italiano", "it"), ("bahasa", "id"), ("en-US", "en"), ("id_ID", "id")]
)
def test_language_names_are_normalised(raw: str, code: str) -> None:
    assert normalise_language(raw) == code


def test_unknown_explicit_language_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="choose it, id or en"):
        detect_language("ciao", explicit="klingon")


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=300), previous=st.sampled_from([None, "it", "id", "en"]))
def test_never_crashes_and_always_answers_a_supported_language(text: str, previous: str | None) -> None:
    guess = detect_language(text, previous=previous)
    assert isinstance(guess, LanguageGuess)
    assert guess.language in ("it", "id", "en") and 0 <= guess.confidence <= 1
