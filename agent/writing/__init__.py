"""Formatting for answers in the user's language (numbers, money, durations) and the shared sentences."""

from agent.writing.assumptions import assumption_lines
from agent.writing.format import (
    ask_back,
    fixed_text,
    hours,
    money,
    number,
    percent,
    same_rental,
    spot_sentence,
    templates,
    token_count,
)
from agent.writing.job import (
    alternatives_shown,
    field_value,
    follow_up,
    limits_line,
    memory_line,
    no_offer_answer,
    recommendation,
    single_card_line,
)
from agent.writing.notes import binding_limit as binding_limit_line
from agent.writing.notes import headline_reason, limit_misses, refused_values, simpler_changes, text_size_note
from agent.writing.public_text import public
from agent.writing.questions import compare, rental_for, spot_delta, yes_no
from agent.writing.verdict_card import SUMMARY_KEYS, rental_summary, verdict

__all__ = [
    "SUMMARY_KEYS",
    "alternatives_shown",
    "ask_back",
    "assumption_lines",
    "binding_limit_line",
    "compare",
    "field_value",
    "fixed_text",
    "follow_up",
    "headline_reason",
    "hours",
    "limit_misses",
    "limits_line",
    "memory_line",
    "money",
    "no_offer_answer",
    "number",
    "percent",
    "public",
    "recommendation",
    "refused_values",
    "rental_for",
    "rental_summary",
    "same_rental",
    "simpler_changes",
    "single_card_line",
    "spot_delta",
    "spot_sentence",
    "templates",
    "text_size_note",
    "token_count",
    "verdict",
    "yes_no",
]
