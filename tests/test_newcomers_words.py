"""What people new to training say, read as they mean it (classes seen in the tune half of the newcomers blind set;
sentences written for this test, in it/id/en):

- a goal in plain words ("a bot that answers like our staff") with no model is a job to ask back about, not an
  off-topic message or an FAQ question; "no idea which model" while that ask-back waits asks again, the facts kept;
- "what's that term?" inside a thread is the FAQ's, however it is asked ("QLoRA itu apa?", "cos'è di preciso ...",
  "whats LoRA", a term in quotes), even when it names a method, and even in words an off-topic check reads as off
  topic; "btw, the weather tomorrow?" is still declined;
- a count of written items is the number of examples, whatever they are called ("9,000 recipes", "4mila ricette"),
  and so is a count said after its items ("the reviews are about 2,500").
"""

from __future__ import annotations

import pytest

from agent.parsing import parse_message

GOALS = [
    ("en", "Hello! I run a small bakery and would love an assistant that answers customer emails like my staff do."),
    ("it", "Salve, gestisco un negozio di ceramiche e vorrei un modello che scriva le descrizioni dei prodotti."),
    ("id", "Halo, saya guru SD. Pengen bikin chatbot yang bisa jawab pertanyaan murid soal IPA."),
]


@pytest.mark.parametrize(("language", "text"), GOALS)
def test_a_goal_without_a_model_is_asked_back(advisor, language, text):
    result = advisor.respond(text)
    assert result["act"] == "ask_back", result["answer"]
    assert result["language"] == language


def test_no_idea_which_model_while_an_ask_back_waits_asks_again_and_keeps_the_facts(advisor):
    first = advisor.respond("Halo, kami mau bikin model yang bisa meringkas laporan rapat.")
    assert first["act"] == "ask_back"
    facts = advisor.respond("ada sekitar 7 ribu laporan", thread_id=first["thread_id"])
    assert facts["spec"]["dataset_examples"] == 7000
    unsure = advisor.respond("nggak tahu modelnya apa, yang paling murah aja", thread_id=first["thread_id"])
    assert unsure["act"] == "ask_back", unsure["answer"]
    assert unsure["spec"]["dataset_examples"] == 7000


TERMS = [
    ("id", "oke. QLoRA itu apa sih sebenarnya?"),
    ("id", "Apa maksudnya 'ditagih per detik' itu?"),
    ("it", "Scusa, cos'è di preciso la quantizzazione?"),
    ("it", "e cos'è sto 'checkpointing' che vedo nel piano?"),
    ("en", "whats QLoRA? I keep seeing it"),
    ("en", "What does 'billed per second' mean for me?"),
]


@pytest.mark.parametrize(("language", "text"), TERMS)
def test_what_a_term_means_is_the_faqs_inside_a_thread(advisor, language, text):
    jobs = {
        "en": "LoRA on Llama 3.1 8B, 10k examples",
        "it": "LoRA su Llama 3.1 8B, 10k esempi",
        "id": "LoRA pada Llama 3.1 8B, 10 ribu contoh",
    }
    first = advisor.respond(jobs[language])
    result = advisor.respond(text, thread_id=first["thread_id"])
    assert result["act"] == "faq", result["answer"]
    assert result["spec"] == first["spec"]
    assert result["citations"], result["answer"]


@pytest.mark.parametrize(
    ("language", "text", "act"),
    [("id", "btw cuaca Bandung besok gimana?", "declined"), ("id", "rencana itu apa?", "question")],
)
def test_what_is_no_term_question_keeps_its_reading(advisor, language, text, act):
    first = advisor.respond("LoRA pada Llama 3.1 8B, 10 ribu contoh")
    assert advisor.respond(text, thread_id=first["thread_id"])["act"] == act


@pytest.mark.parametrize(
    ("language", "text", "examples"),
    [
        ("en", "we have about 9,000 recipes", 9000),
        ("it", "ci sono circa 4mila ricette", 4000),
        ("id", "ada sekitar 7 ribu resep", 7000),
        ("en", "the reviews are about 2,500", 2500),
        ("it", "le recensioni saranno più o meno 1200", 1200),
        ("id", "ulasan pelanggan kami ada kira-kira 6 ribu", 6000),
    ],
)
def test_a_count_of_written_items_is_the_number_of_examples(language, text, examples):
    result = parse_message(text, lang=language, use_llm=False)
    assert result.spec.dataset_examples == examples
    assert result.spec.budget is None


@pytest.mark.parametrize(
    ("language", "text", "field", "value"),
    [
        ("en", "QLoRA on Llama 3.1 8B, examples with 512 tokens", "dataset_examples", None),  # a length, no count
        ("id", "budget 500 ribu", "budget", 500000.0),  # an amount names no items
    ],
)
def test_what_counts_no_items_is_not_read_as_examples(language, text, field, value):
    result = parse_message(text, lang=language, use_llm=False)
    found = getattr(result.spec, field)
    assert (found.amount if field == "budget" else found) == value
