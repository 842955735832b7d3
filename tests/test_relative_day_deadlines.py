"""'Tonight', 'tomorrow', 'the day after' name a deadline only when the message says the job must be done by then
("entro stasera", "I need it by tomorrow", "besok harus selesai"); "lo lancio io stasera" (I'll launch it tonight) or
"I start tomorrow" name when the user acts, not a deadline (as 'today' already was)."""

from __future__ import annotations

import pytest

from agent.parsing.parse import parse_message

DEADLINES = [
    ("it", "mi serve entro stasera", 12.0),
    ("it", "deve essere pronto domani", 24.0),
    ("it", "mi serve per domani", 24.0),
    ("en", "I need it by tomorrow", 24.0),
    ("en", "it must be done tonight", 12.0),
    ("id", "besok harus selesai", 24.0),
    ("id", "butuh lusa", 48.0),
]
NOT_DEADLINES = [
    ("it", "me lo esporti come task SkyPilot? lo lancio io stasera"),
    ("en", "I start tomorrow, what should I rent?"),
    ("id", "besok saya mulai, sewa GPU apa?"),
]


@pytest.mark.parametrize(("language", "text", "hours"), DEADLINES)
def test_a_day_the_job_must_be_done_by_is_a_deadline(language, text, hours):
    assert parse_message(text, lang=language, use_llm=False).spec.deadline_hours == hours


@pytest.mark.parametrize(("language", "text"), NOT_DEADLINES)
def test_a_day_the_user_acts_on_is_no_deadline(language, text):
    assert parse_message(text, lang=language, use_llm=False).spec.deadline_hours is None
