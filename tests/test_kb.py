"""The FAQ knowledge base: aligned entries in three languages, faithful source text, and retrieval quality."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kb import TOPIC_ENTRY, entry, search, topic_entry
from kb.entries import LANGUAGES, aliases, display_rewrites, entries, entry_ids, for_display
from kb.retrieval import rank
from kb.text import MAX_QUERY_CHARS, terms
from tests.shared_data import shared_path

SOURCE_FILES = {
    ("training", "it"): "000_24166b4e888f44b9.txt",
    ("training", "id"): "001_6b2cced0a77465c1.txt",
    ("fine_tuning", "it"): "002_76ad0f8eb38ff330.txt",
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_language_has_the_same_entries_in_the_same_order(language):
    items = entries(language)
    assert [e.id for e in items] == list(entry_ids())
    assert len(set(entry_ids())) == len(entry_ids())
    for item in items:
        assert item.language == language
        assert item.title.strip() and len(item.text) > 40
        assert item.article == item.id.split(".")[0]


def test_aligned_entries_have_the_same_kind_and_comparable_length():
    for en, it, id_ in zip(entries("en"), entries("it"), entries("id")):
        assert en.kind == it.kind == id_.kind, en.id
        for other in (it, id_):
            assert 0.6 < len(other.text) / len(en.text) < 1.7, (other.id, other.language)


def test_each_article_has_four_faq_entries_per_language():
    for language in LANGUAGES:
        for article in ("training", "fine_tuning"):
            faqs = [e for e in entries(language) if e.article == article and e.kind == "faq"]
            assert len(faqs) == 4
            assert all(e.title.rstrip().endswith("?") for e in faqs)


@pytest.mark.parametrize(("article", "language"), sorted(SOURCE_FILES))
def test_given_texts_are_kept_verbatim(article, language):
    """Entries of the given articles are the published text (with only the listed display rewrites)."""
    source = for_display(
        " ".join((shared_path("seeds") / SOURCE_FILES[(article, language)]).read_text(encoding="utf-8").split()),
        language,
    )
    for item in entries(language):
        if item.article == article:
            assert item.text in source, item.id
            if item.kind == "faq":
                assert item.title in source, item.id


@pytest.mark.parametrize("language", LANGUAGES)
def test_aliases_only_name_existing_entries(language):
    assert set(aliases(language)) <= set(entry_ids())
    assert all(aliases(language).values())


def test_topic_ids_exist_and_fine_tuning_variants_differ():
    for topic, entry_id in TOPIC_ENTRY.items():
        for language in LANGUAGES:
            assert entry(entry_id, language).id == entry_id
        assert topic_entry(topic) == entry_id
    assert topic_entry("spot", fine_tuning=True) == "fine_tuning.faq_spot"
    assert topic_entry("spot") == "training.faq_spot"
    with pytest.raises(KeyError):
        topic_entry("weather")
    with pytest.raises(ValueError, match="unknown knowledge-base entry"):
        entry("training.nope", "en")


def test_entry_is_the_same_entry_in_every_language():
    texts = {language: entry("training.faq_spot", language).text for language in LANGUAGES}
    assert len(set(texts.values())) == 3
    assert all("spot" in text.lower() for text in texts.values())


@pytest.mark.parametrize(
    ("question", "language", "expected"),
    [
        ("posso usare le spot?", "it", {"training.faq_spot", "fine_tuning.faq_spot"}),
        ("le VM prerilasciabili sono un rischio per un addestramento di una settimana?", "it", {"training.faq_spot"}),
        ("a cosa serve NVLink tra le schede?", "it", {"training.faq_interconnect", "training.spec_interconnect"}),
        ("apakah instance yang bisa dimatikan sewaktu-waktu cocok untuk training?", "id", {"training.faq_spot"}),
        ("berapa VRAM yang dibutuhkan untuk QLoRA?", "id", {"fine_tuning.faq_memory", "fine_tuning.method_lora_qlora"}),
        (
            "do I need a cluster or will one card do?",
            "en",
            {"training.faq_multi_gpu", "fine_tuning.faq_single_vs_multi"},
        ),
        ("why bf16 instead of fp16", "en", {"training.spec_low_precision", "fine_tuning.precision"}),
        (
            "does my training crash with OOM because of Adam?",
            "en",
            {"training.memory_beyond_weights", "training.faq_memory"},
        ),
    ],
)
def test_paraphrased_questions_find_the_answering_entry_first(question, language, expected):
    hits = search(question, language, k=3)
    assert hits, question
    assert hits[0].id in expected
    assert all(h.language == language for h in hits)


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("fine-tuning pakai spot aman?", "id"),
        ("fine-tuning con le spot instances, safe?", "it"),
        ("finetune on spot, aman gak?", "en"),
    ],
)
def test_mixed_language_questions_still_find_the_spot_entry(question, language):
    assert search(question, language, k=1)[0].id in {"fine_tuning.faq_spot", "training.faq_spot"}


def test_compounds_match_however_they_are_written():
    for spelling in ("fine-tuning", "fine tuning", "finetuning", "fine-tune"):
        assert "finetun" in terms(f"{spelling} on spot", "en"), spelling


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("how do I train my dog to sit?", "en"),
        ("ricetta della pizza napoletana", "it"),
        ("jadwal kereta ke Bandung besok", "id"),
        ("", "en"),
        ("🚀🔥🤖", "it"),
        ("?!... ---", "id"),
    ],
)
def test_questions_the_kb_cannot_answer_get_no_citation(question, language):
    assert search(question, language) == []
    assert rank(question, language).answerable is False


def test_huge_input_is_cut_and_still_answered_quickly():
    question = "can I use spot instances for training? " + "lorem ipsum dolor " * 50_000
    assert len(terms(question, "en")) <= MAX_QUERY_CHARS
    assert search(question, "en", k=1)[0].id in {"training.faq_spot", "training.provider_spot"}


def test_unsupported_language_code_is_a_clear_error():
    with pytest.raises(ValueError, match="choose it, id or en"):
        search("spot?", "de")  # type: ignore[arg-type]


def test_eval_sets_reference_only_existing_entries():
    root = Path(__file__).resolve().parent.parent / "evals" / "faq"
    known = set(entry_ids())
    for path in root.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            assert set(json.loads(line)["expected"]) <= known, (path.name, line)


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("which card runs Elden Ring at 4k with the most fps?", "en"),
        ("mi conviene una gpu per giocare in 4k?", "it"),
        ("deploy llama on a kubernetes endpoint with autoscaling, which GPU?", "en"),
        ("berapa harga per token buat serving model di GPU?", "id"),
        ("che learning rate metto per il mio qlora?", "it"),
    ],
)
def test_nearby_subjects_the_articles_do_not_cover_get_no_answer(question, language):
    assert not rank(question, language).answerable
    assert search(question, language) == []


@pytest.mark.parametrize(
    ("question", "language", "expected"),
    [
        ("can I run QLoRA on my old RTX gaming GPU?", "en", "fine_tuning.match_consumer"),
        ("posso fare qlora con la mia rtx da gaming?", "it", "fine_tuning.match_consumer"),
    ],
)
def test_a_domain_question_that_mentions_a_nearby_subject_is_still_answered(question, language, expected):
    ranking = rank(question, language)
    assert ranking.answerable
    assert expected in [hit.id for hit in ranking.hits[:3]]


@pytest.mark.parametrize(
    ("count_question", "language"),
    [
        ("how many GPUs for a full fine-tune", "en"),
        ("quante GPU per un full fine-tuning", "it"),
        ("berapa GPU buat full fine-tuning", "id"),
    ],
)
def test_asking_for_a_number_of_gpus_means_multi_gpu(count_question, language):
    assert set(terms("multi-GPU", language)) <= set(terms(count_question, language))


@pytest.mark.parametrize("language", LANGUAGES)
def test_model_sizes_are_not_terms(language):
    assert terms("Llama 70B 8b 1.5B spot", language) == terms("Llama spot", language)


def test_a_one_letter_typo_finds_the_same_entry():
    right = rank("can I resume from a checkpoint on spot instances?", "en")
    typo = rank("can I resume from a chekpoint on spot instances?", "en")
    assert typo.query_terms == right.query_terms
    assert typo.hits[0].id == right.hits[0].id


@pytest.mark.parametrize("language", LANGUAGES)
def test_no_entry_points_at_a_comparison_that_is_not_there(language):
    """The articles sat under a comparison table; shown entries point at the offers table instead."""
    published = [old for old, _ in display_rewrites(language)]
    shown = [new for _, new in display_rewrites(language)]
    texts = [f"{item.title} {item.text}" for item in entries(language)]
    assert not [t for t in texts for old in published if old.lower() in t.lower()]
    assert any(new in t or new.capitalize() in t for t in texts for new in shown)
    pointer = {"en": r"\babove\b", "it": r"\bsopra\b", "id": r"\bdi atas\b"}[language]
    assert not [t for t in texts if re.search(pointer, t, re.IGNORECASE)]
