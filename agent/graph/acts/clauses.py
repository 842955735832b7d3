"""What a message states and what it asks, clause by clause: "ok let's do 2 epochs, how long will that take?" states
a change (the first clause, a statement) and asks about it (the last, a question); "if we did 2 epochs, how long?"
states nothing (its first clause is a condition). The cue lists are the acts' (prompts/<lang>/words/acts.json)."""

from __future__ import annotations

import re
from collections.abc import Callable

from agent.parsing import parse_fields

CLAUSE_END = re.compile(r"[.;:!?](?=\s|$)|,(?=\s)|\s[-–—]\s")
"""Where a clause ends: a stop, a colon or a question mark, a comma before a space (not "2,5"), a dash between
spaces."""


ASKING = ("condition", "hypothetical", "fit", "inverse", "why_not")
"""Cue lists that make a clause part of the question ("if we did 2 epochs", "why not B200"), not a statement."""


def stated_before_question(
    text: str,
    language: str,
    fields: set[str],
    has: Callable[[str, str, str], bool],
    asks: Callable[[str, str], bool],
) -> set[str]:
    """The fields of `fields` the message states in a statement before its closing question: the clauses before the
    last one, which ends with "?", are no question themselves (`asks`: "why not B200, ...") and hold no question
    mark, no condition ("if", "e se", "kalau", "and with") and no fit question; empty otherwise."""
    stripped = text.strip()
    if not stripped.endswith("?"):
        return set()
    ends = [m.end() for m in CLAUSE_END.finditer(stripped[:-1])]
    if not ends:
        return set()
    head = stripped[: ends[-1]]
    if "?" in head or asks(head, language) or any(has(cue, head, language) for cue in ASKING):
        return set()
    return fields & set(parse_fields(head, language)[0])
