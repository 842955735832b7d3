"""What a message says before the question that closes it: "ok let's do 2 epochs, how long will that take?" says "ok
let's do 2 epochs," (a statement of a change) before its question; "how long?" says nothing before it."""

from __future__ import annotations

import re

CLAUSE_END = re.compile(r"[.;:!?](?=\s|$)|,(?=\s)|\s[-–—]\s")
"""Where a clause ends: a stop, a colon or a question mark, a comma before a space (not "2,5"), a dash between
spaces."""


def before_closing_question(text: str) -> str | None:
    """The clauses before the last one when the message ends with a question mark (with the mark that ends them);
    None when it does not, or when it is one clause."""
    stripped = text.strip()
    if not stripped.endswith("?"):
        return None
    ends = [m.end() for m in CLAUSE_END.finditer(stripped[:-1])]
    return stripped[: ends[-1]] if ends else None
