"""Code-mixed messages keep their language from the words only one language has: number words and number suffixes
("cinquanta", "100rb", "25mila") and the Indonesian clitic on a borrowed word ("datasetnya", "modelnya"), where
English technical words would otherwise tie the count."""

from __future__ import annotations

import pytest

from agent.language.detect import detect_language

CASES = [
    ("guys gue mau finetune qwen 2.5 7b, modelnya buat chatbot, budget 200rb, which cloud is the best?", "id"),
    ("budgetnya cuma 150rb, is that enough for llama 3.2 1b?", "id"),
    ("circa cinquanta euro max per llama 3.2 1b", "it"),
    ("sui 25mila esempi, full fine-tuning di llama 3.2 1b", "it"),
    ("LoRA on Llama 3.1 8B, 50k examples, budget 200 dollars", "en"),
    ("fine-tune llama 3.2 1b on the Kenya dataset, 10k rows", "en"),
]


@pytest.mark.parametrize(("text", "language"), CASES)
def test_number_words_and_clitics_tell_the_language(text, language):
    assert detect_language(text).language == language
