"""Formatting for answers in the user's language (numbers, money, durations) and the shared sentences.
"""

from agent.writing.format import hours, money, number, percent, same_rental, templates, token_count
from agent.writing.job import field_value, memory_line, no_offer_answer, single_card_line
from agent.writing.notes import limit_misses
from agent.writing.public_text import public
from agent.writing.verdict_card import rental_summary, verdict

from agent.writing.notes import headline_reason

from agent.writing.questions import compare
from agent.writing.questions import rental_for
from agent.writing.questions import spot_delta
from agent.writing.questions import yes_no

from agent.writing.notes import refused_values

from agent.writing.job import follow_up
from agent.writing.job import recommendation

from agent.writing.format import ask_back
from agent.writing.format import fixed_text
from agent.writing.assumptions import assumption_lines

__all__ = ['assumption_lines', 'ask_back', 'compare', 'field_value', 'fixed_text', 'follow_up', 'headline_reason', 'hours', 'limit_misses', 'memory_line', 'money', 'no_offer_answer', 'number', 'percent', 'public', 'recommendation', 'refused_values', 'rental_for', 'rental_summary', 'same_rental', 'single_card_line', 'spot_delta', 'templates', 'token_count', 'verdict', 'yes_no']
