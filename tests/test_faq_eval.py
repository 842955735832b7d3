"""The FAQ eval runner scores the hand-written sets; recall must stay at the issue's target on every split."""

from __future__ import annotations

import pytest

from evals.faq.__main__ import main
from evals.faq.runner import load_questions, score
from kb.entries import LANGUAGES

TARGET_RECALL_AT_3 = 0.95


@pytest.mark.parametrize("language", LANGUAGES)
def test_question_sets_are_large_enough_and_include_unanswerable_questions(language):
    questions = load_questions(language, "dev") + load_questions(language, "holdout") + load_questions(language, "blind")
    assert len([q for q in questions if q.expected]) >= 25
    assert len([q for q in questions if not q.expected]) >= 5


@pytest.mark.parametrize("language", LANGUAGES)
def test_dev_recall_at_3_meets_the_target_and_no_answers_are_right(language):
    result = score(language, "dev")
    assert result.recall_at_3 >= TARGET_RECALL_AT_3, result.misses
    assert result.recall_at_1 <= result.recall_at_3
    assert result.no_answer_precision >= 0.9, result.misses


def test_runner_prints_every_split_and_the_command_to_reproduce(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    for split in ("dev", "holdout", "blind", "blind2"):
        assert split in out
    assert "reproduce: .venv/bin/python -m evals.faq" in out
