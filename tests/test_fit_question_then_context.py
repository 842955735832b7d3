"""A first message that asks whether the job fits a card and then adds context ("... basta per QLoRA? Sono 5000
esempi, nessuna fretta.") is a fit question: the question is a sentence that ends with "?", not necessarily the
message's last one; a fit word in a statement after another question is not one. Class seen in the tune half of the
hardware-first blind dialogue set; sentences written for this test, in it/id/en."""

from __future__ import annotations

import pytest

from agent.service import Advisor

FIT_THEN_CONTEXT = {
    "it": "Una L4 da 24 GB basta per QLoRA su Llama 3.1 8B? Sono 5000 esempi, nessuna fretta.",
    "id": "Satu L4 24GB cukup buat QLoRA Llama 3.1 8B? Datanya 5000 contoh, santai saja.",
    "en": "Is one 24GB L4 enough for QLoRA on Llama 3.1 8B? It's 5000 examples and there's no rush.",
}
FIT_WORD_IN_A_STATEMENT = {
    "it": "QLoRA su Llama 3.1 8B, 5000 esempi: cosa mi consigli? Basta che costi poco.",
    "id": "QLoRA Llama 3.1 8B, 5000 contoh: saran GPU apa? Yang murah sudah cukup.",
    "en": "QLoRA on Llama 3.1 8B, 5000 examples: what do you suggest? Cheap is enough for me.",
}


@pytest.mark.parametrize("language", FIT_THEN_CONTEXT)
def test_a_fit_question_followed_by_context_is_answered_yes_or_no(advisor: Advisor, language: str) -> None:
    result = advisor.respond(FIT_THEN_CONTEXT[language])
    assert result["verdict"]["answer_kind"] == "yes_no" and result["verdict"]["answer"] == "yes", result["answer"]
    assert result["spec"]["dataset_examples"] == 5000 and result["spec"]["method"] == "qlora"


@pytest.mark.parametrize("language", FIT_WORD_IN_A_STATEMENT)
def test_a_fit_word_in_a_statement_after_another_question_asks_no_fit(advisor: Advisor, language: str) -> None:
    result = advisor.respond(FIT_WORD_IN_A_STATEMENT[language])
    assert result["verdict"]["answer_kind"] == "recommendation", result["answer"]
