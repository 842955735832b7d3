"""The blind dialogue runner checks each answer's language against the language the user speaks at that turn: the
dialogue's, until a turn's row names another in its spec (a switch mid-dialogue), and that one for the turns after.
It checked every turn against the dialogue's file language, so a correct English answer to a user who had switched
to English counted as a miss."""

from __future__ import annotations

from evals.dialogues_blind.runner import spoken_language


def test_a_switch_named_in_a_turns_spec_holds_for_the_turns_after():
    turns = [
        {"say": "LoRA su Phi-3 mini", "spec": {"language": "it", "method": "lora"}},
        {"say": "ok", "act": "change"},
        {"say": "switching to English: 3 epochs", "spec": {"language": "en", "epochs": 3}},
        {"say": "how long?", "act": "question"},
    ]
    spoken, current = [], "it"
    for turn in turns:
        current = spoken_language(turn, current)
        spoken.append(current)
    assert spoken == ["it", "it", "en", "en"]


def test_a_turn_without_a_language_keeps_the_dialogues():
    assert spoken_language({"say": "quanto costa?", "spec": {"epochs": 2}}, "it") == "it"
