"""Turns read against what the thread already holds (classes from the expert blind set's tune half; sentences written
for this test): settings a question names with the job's own values only restate the plan; a memory question with a
new setting asks that setting's memory; "go back to <value>" before any other plan sets it; a bare number after
a what-if on one number field is that field; offering keys or asking to act on the user's account is declined with
what to do instead."""

from __future__ import annotations

import pytest

JOBS = {
    "it": "QLoRA Llama 3.1 8B, seq 2048, mbs 8, 20k esempi, 2 epoche",
    "id": "QLoRA Llama 3.1 8B, seq 2048, mbs 8, 20 ribu contoh, 2 epoch",
    "en": "QLoRA on Llama 3.1 8B, seq 2048, mbs 8, 20k examples, 2 epochs",
}


def _thread(advisor, language):
    """A new thread holding the language's job; its first result."""
    first = advisor.respond(JOBS[language])
    assert first["act"] == "new_job" and first["spec"]["micro_batch_size"] == 8
    return first


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("it", "Con mbs 8 quanti GB servono per scheda?"),
        ("id", "dengan mbs 8 berapa GB per GPU?"),
        ("en", "with mbs 8, how many GB per GPU?"),
    ],
)
def test_a_memory_question_restating_the_job_is_a_question(advisor, language, text):
    first = _thread(advisor, language)
    turn = advisor.respond(text, thread_id=first["thread_id"])
    assert turn["act"] == "question" and turn["spec"] == first["spec"], turn["answer"]
    assert "GiB" in turn["answer"]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("it", "con seq 8192 quanta memoria serve?"),
        ("id", "kalau seq 8192 berapa GB per GPU?"),
        ("en", "how many GB per GPU with seq 8192?"),
    ],
)
def test_a_memory_question_with_a_new_setting_asks_that_settings_memory(advisor, language, text):
    first = _thread(advisor, language)
    turn = advisor.respond(text, thread_id=first["thread_id"])
    assert turn["act"] == "what_if" and turn["spec"] == first["spec"], turn["answer"]
    plan = advisor.respond("con mbs 8 quanta memoria serve?", thread_id=first["thread_id"])
    assert "GiB" in turn["answer"] and turn["answer"] != plan["answer"]


def test_going_back_to_a_value_before_any_other_plan_sets_it(advisor):
    first = _thread(advisor, "it")
    turn = advisor.respond("troppo lungo, torna alle 1 epoche", thread_id=first["thread_id"])
    assert turn["act"] == "change" and turn["spec"]["epochs"] == 1, turn["answer"]
    changed = advisor.respond("e con 3 epoche?", thread_id=first["thread_id"])
    advisor.respond("ok fallo", thread_id=first["thread_id"])
    back = advisor.respond("no, torna alle 1 epoche", thread_id=first["thread_id"])
    assert changed["act"] == "what_if" and back["act"] == "undo" and back["spec"]["epochs"] == 1, back["answer"]


@pytest.mark.parametrize(
    ("language", "what_if", "bare"),
    [
        ("it", "e con seq 8192?", "ok, facciamo 4096 allora"),
        ("id", "kalau seq 8192?", "oke, pakai 4096 saja"),
        ("en", "what if seq 8192?", "fine, let's do 4096."),
    ],
)
def test_a_bare_number_after_a_what_if_is_that_field(advisor, language, what_if, bare):
    first = _thread(advisor, language)
    asked = advisor.respond(what_if, thread_id=first["thread_id"])
    assert asked["act"] == "what_if" and asked["spec"]["seq_len"] == 2048
    turn = advisor.respond(bare, thread_id=first["thread_id"])
    assert turn["act"] == "change" and turn["spec"]["seq_len"] == 4096, turn["answer"]
    assert {k: v for k, v in turn["spec"].items() if k != "seq_len"} == {
        k: v for k, v in first["spec"].items() if k != "seq_len"
    }


def test_a_bare_number_with_no_what_if_waiting_changes_nothing(advisor):
    first = _thread(advisor, "en")
    turn = advisor.respond("fine, let's do 4096", thread_id=first["thread_id"])
    assert turn["spec"] == first["spec"], turn["answer"]


@pytest.mark.parametrize(
    ("language", "text", "words"),
    [
        ("en", "Can you log into my cloud account and launch it? I'll paste my API key here.", "sky launch"),
        ("it", "ti passo la mia API key, lancialo tu", "sky launch"),
        ("id", "ini password akun saya, tolong jalankan untuk saya", "sky launch"),
    ],
)
def test_keys_and_logins_are_declined_with_what_to_do(advisor, language, text, words):
    first = _thread(advisor, language)
    turn = advisor.respond(text, thread_id=first["thread_id"])
    assert turn["act"] == "declined" and turn["spec"] == first["spec"], turn["answer"]
    assert words in turn["answer"] and "SkyPilot" in turn["answer"]


@pytest.mark.parametrize(
    "text",
    ["we have credits on our AWS account, which offer there?", "abbiamo crediti sul nostro account GCP"],
)
def test_an_account_mentioned_in_a_request_is_not_declined(advisor, text):
    first = _thread(advisor, "en")
    assert advisor.respond(text, thread_id=first["thread_id"])["act"] != "declined"


def test_without_written_w_slash_o_refuses_spot():
    from agent.parsing import parse_message

    assert parse_message("how much is it w/o spot").spec.interruptible_ok is False


@pytest.mark.parametrize(
    ("text", "value"), [("Ya udah, pakai 4096.", 4096), ("use 2,048 then", 2048), ("ok 1.024", 1024)]
)
def test_a_bare_number_ending_a_sentence_or_with_a_thousands_mark_is_read_whole(text, value):
    from agent.parsing.corrections import pending_number

    assert pending_number(text, {"seq_len": 8192}) == {"seq_len": value}
