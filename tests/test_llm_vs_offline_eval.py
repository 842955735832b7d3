"""The offline-vs-LLM eval's grader and replay server: they must see a cut or invented reply that reaches the user,
and not count a sentence copied from the draft (evals/llm_vs_offline)."""

from __future__ import annotations

from evals.dialogues_blind.runner import load
from evals.llm_vs_offline import replay
from evals.llm_vs_offline.runner import compare, run_dialogues, shown_sentences

DRAFT = "**Rent 1x H100** on runpod for about 2.0 hours, $4.00 in total. It fits your budget of $50."


def test_the_grader_sees_a_cut_reply_shown_as_the_answer_and_an_invented_sentence():
    cut, _ = replay.phrase_reply("cut_by_length", DRAFT, "English")
    assert cut and DRAFT.startswith(cut)
    assert shown_sentences([("phrase", "cut_by_length", cut, DRAFT)], cut)  # the whole answer is the cut reply
    assert not shown_sentences([("phrase", "cut_by_length", cut, DRAFT)], DRAFT)  # the draft was shown
    company, _ = replay.phrase_reply("the_company", DRAFT, "English")
    assert shown_sentences([("phrase", "the_company", company, DRAFT)], DRAFT + "\n\n" + company)
    assert not shown_sentences([("phrase", "faithful", DRAFT, DRAFT)], DRAFT)


def test_the_replayed_classes_change_what_they_claim_to_change():
    assert replay.phrase_reply("wrong_numbers", DRAFT, "English")[0] != DRAFT
    assert "4.00" not in replay.phrase_reply("wrong_numbers", DRAFT, "English")[0]
    assert replay.phrase_reply("flipped_verdict", "Sì — ci sta.", "Italian")[0] == "No — ci sta."
    assert replay.phrase_reply("faithful", DRAFT, "English") == (DRAFT, False)
    assert replay._pick(replay.PHRASE, "phrase", DRAFT) == replay._pick(replay.PHRASE, "phrase", DRAFT)


def test_one_dialogue_is_answered_at_least_as_well_with_the_replayed_llm(monkeypatch):
    dialogues = load("tune", "en")[:1]
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    offline = run_dialogues(dialogues)
    with replay.running() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "replay")
        online = run_dialogues(dialogues, server)
    figures = compare(dialogues, offline, online)
    assert server.log and figures["turns"] == len(dialogues[0]["turns"])
    assert figures.get("worse", 0) == 0 and figures.get("hostile_shown_turns", 0) == 0, figures["misses"]
    assert figures.get("notes_more_than_one", 0) == 0, figures["misses"]
