"""Deterministic offline parser: a chat message in Italian, Indonesian or English -> JobSpec fields.

The three vocabularies in `agent/lexicon/parsing.json` are applied together (people mix languages); the language only
decides how ambiguous digit groups read ("1.500" is 1500 in it/id, 1.5 in en) and a bare budget's currency. Each
number is claimed by one field at most, in a fixed order: money, model names, GPU counts, sizes, data, training
settings, durations. The rules live in `agent/parsing/rules/`, one module per field family.
"""

from __future__ import annotations

from typing import Any

from agent.language import find_quantities
from agent.parsing.rules.caps import read_caps
from agent.parsing.rules.context import claim_experience, claim_past_clauses, claim_questioned_values
from agent.parsing.rules.data import read_sizes_and_data
from agent.parsing.rules.gpus import read_gpu_count, read_gpus
from agent.parsing.rules.hardware import (
    read_card_memory,
    read_cleared_wishes,
    read_count_with_only,
)
from agent.parsing.rules.model import MODEL_FAMILIES, read_family_size, read_model
from agent.parsing.rules.money import read_bare_budget, read_budget
from agent.parsing.rules.preferences import read_flags, read_places, read_spot
from agent.parsing.rules.scan import Scan, prepare
from agent.parsing.rules.text_size import read_text_size
from agent.parsing.rules.time import read_deadline

__all__ = ["EXTRACTORS", "MODEL_FAMILIES", "parse_fields", "prepare", "read_message"]

EXTRACTORS = (
    read_budget,
    read_model,
    read_text_size,
    read_caps,
    read_gpus,
    read_card_memory,
    read_count_with_only,
    read_gpu_count,
    read_sizes_and_data,
    read_family_size,
    read_deadline,
    read_bare_budget,
    read_spot,
    read_flags,
    read_places,
    read_cleared_wishes,
)
"""Field readers in the order they claim numbers."""


def read_message(text: str, lang: str = "en") -> Scan:
    """The finished scan of a message: its fields (`values`), assumptions and notes (`model_guess`, `unknown_model`)."""
    prepared = prepare(text)
    scan = Scan(text=prepared, lang=lang, quantities=find_quantities(prepared, lang))
    claim_past_clauses(scan)
    claim_experience(scan)
    claim_questioned_values(scan)
    for extract in EXTRACTORS:
        extract(scan)
    return scan


def parse_fields(text: str, lang: str = "en") -> tuple[dict[str, Any], list[str]]:
    """JobSpec fields (no language) the message states, and the assumptions made reading it."""
    scan = read_message(text, lang)
    return scan.values, scan.assumptions
