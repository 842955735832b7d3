"""Settings and requests said in ways the parser and the act reader had not met (classes seen in the tune halves of
the long-sessions and where-and-on-what blind sets; sentences written for this test, in it/id/en):

- a size word of a family whose models are named by size ("passiamo al large" on GPT-2, "and the xl one?") is that
  model; a size word of something else ("a large dataset") is not;
- "the 4-bit variant" is QLoRA; "ok, make the switch" adopts what was offered;
- a place said as allowed ("Asia is fine", "va bene anche l'UE", "Eropa atau Jepang boleh") is a region wish; it was
  declined as off-topic or read as one place;
- a summary asked in so many lines ("riassumi il piano in due righe") is a summary, not two examples;
- "wheres it located" asks where; "cud i ..." asks;
- "aku lagi ngerjain skripsi" (I am working on my thesis) is about the user, no request to write it.
"""

from __future__ import annotations

import pytest

from agent.parsing import parse_message


@pytest.mark.parametrize(
    ("text", "field", "value"),
    [
        ("let's go with the 4-bit variant", "method", "qlora"),
        ("Asia is fine for us", "regions", ["asia"]),
        ("per noi va bene anche l'UE", "regions", ["eu"]),
        ("Eropa atau Jepang boleh", "regions", ["europe", "japan"]),
    ],
)
def test_a_setting_said_another_way_is_read(text, field, value):
    assert getattr(parse_message(text, use_llm=False).spec, field) == value


@pytest.mark.parametrize(
    ("text", "model"),
    [("ok, passiamo al large.", "gpt2-large"), ("and the xl one?", "gpt2-xl"), ("a large dataset, 6B tokens", "gpt2")],
)
def test_a_size_word_names_the_familys_model_only_when_said_as_the_models(advisor, text, model):
    first = advisor.respond("pretraining GPT-2 from scratch on 5B tokens")
    result = advisor.respond(text, thread_id=first["thread_id"])
    final = advisor.respond("ok, do that", thread_id=first["thread_id"]) if result["act"] == "what_if" else result
    assert final["spec"]["model"] == model, (result["act"], result["answer"][:200])


def test_make_the_switch_adopts_what_was_offered(advisor):
    first = advisor.respond("LoRA on Mistral 7B, 30k examples")
    advisor.respond("what if we used QLoRA?", thread_id=first["thread_id"])
    result = advisor.respond("Yes, make the switch.", thread_id=first["thread_id"])
    assert result["act"] == "change" and result["spec"]["method"] == "qlora", result["answer"]


@pytest.mark.parametrize(
    ("text", "topic_word"),
    [("riassumi il piano in due righe per il capo", "Il lavoro"), ("wheres the cheapest one located", "Region")],
)
def test_questions_said_another_way_are_questions(advisor, text, topic_word):
    first = advisor.respond(
        "LoRA on Mistral 7B, 30k examples" if topic_word == "Region" else "LoRA su Mistral 7B, 30mila esempi"
    )
    result = advisor.respond(text, thread_id=first["thread_id"])
    assert result["act"] == "question" and result["spec"] == first["spec"], result["answer"]
    assert topic_word in result["answer"], result["answer"]


def test_working_on_ones_thesis_is_no_request_to_write_it(advisor):
    result = advisor.respond(
        "halo, aku lagi ngerjain skripsi dan perlu fine-tune Llama 3.2 1B pakai LoRA, 2 ribu contoh"
    )
    assert result["act"] == "new_job", result["answer"]


def test_going_back_steps_is_an_undo_and_a_deadline_moved_back_is_a_change(advisor):
    first = advisor.respond("LoRA Mistral 7B, 30 ribu contoh, tenggat 3 hari")
    advisor.respond("jadi 2 epoch", thread_id=first["thread_id"])
    back = advisor.respond("mundur satu langkah dong", thread_id=first["thread_id"])
    assert back["act"] == "undo" and back["spec"]["epochs"] == first["spec"]["epochs"], back["answer"]
    moved = advisor.respond("eh tenggatnya mundur, jadi 7 hari", thread_id=first["thread_id"])
    assert moved["act"] == "change" and moved["spec"]["deadline_hours"] == 168, moved["answer"]
