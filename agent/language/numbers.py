"""The one number reader of the parser and the claim checker: digit groups per language ("5.000.000", "1,5",
"1,500"), number words in it/id/en ("ventiquattro", "dua puluh empat", "twenty-four", "mezzo miliardo",
"satu setengah") and magnitudes after digits ("20M", "100 miliardi", "2 juta", "2jt", "5 grand").

Word tables live in prompts/<lang>/words/numbers.json (numbers.json holds the language-neutral letters); all three
languages are read together (people mix them), and the language only decides how an ambiguous digit group reads.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from agent.language.number_words import (  # noqa: F401  (the number reader's one face)
    NUMBER,
    ROLE_OF,
    ROLES,
    Piece,
    _neutral,
    _scale_pattern,
    combine,
    format_number,
    languages,
    magnitudes,
    tables,
    word_pieces,
    words_to_digits,
)


@dataclass(frozen=True, kw_only=True)
class Quantity:
    """A number found in text, with its magnitude word and position."""

    value: float
    """The number times its magnitude (\"20M\" -> 20_000_000)."""
    number: float
    """The number as written, without magnitude."""
    scale: float
    """The magnitude multiplier (1 when none)."""
    start: int
    end: int
    """Span of number plus magnitude in the text it was read from."""
    attached: bool
    """True when a letter follows the digits with no space ("7B", "20M", "4x")."""


def parse_number(raw: str, lang: str = "en") -> float:
    """A digit group's value in the language's style: it/id '1.500' = 1500 and '1,5' = 1.5; en '1,500' = 1500.

    Both separators: the last is the decimal one. One separator repeated: thousands. One separator before exactly
    three digits: thousands if it is the language's thousands separator (and the integer part is not 0), else
    decimal.
    """
    s = raw.strip()
    seps = re.findall(r"[.,]", s)
    try:
        if not seps:
            return float(s)
        if len(set(seps)) == 2:
            decimal = s[max(s.rfind("."), s.rfind(","))]
            head, tail = s.rsplit(decimal, 1)
            return float(re.sub(r"[.,]", "", head) + "." + tail)
        sep = seps[0]
        if len(seps) > 1:
            return float(s.replace(sep, ""))
        head, tail = s.split(sep)
        thousands = "." if _neutral()["decimal_separator"].get(lang, ".") == "," else ","
        if len(tail) == 3 and sep == thousands and head.strip("0"):
            return float(head + tail)
        return float(f"{head or 0}.{tail or 0}")
    except ValueError:
        return float(re.sub(r"\D", "", s) or 0)


def find_quantities(text: str, lang: str = "en") -> list[Quantity]:
    """Every number in `text` (already passed through `words_to_digits`), with its magnitude applied."""
    scales = {k.lower(): v for k, v in magnitudes().items()}
    found: list[Quantity] = []
    for match in _scale_pattern().finditer(text):
        number = parse_number(match.group(1), lang)
        word = (match.group(2) or "").strip().lower()
        scale = scales.get(word, 1.0)
        if not math.isfinite(number * scale):
            continue  # a number too large for a float is no quantity anyone means
        end = match.end() if match.group(2) else match.end(1)
        attached = end < len(text) and text[match.end(1) : match.end(1) + 1].isalpha()
        found.append(
            Quantity(value=number * scale, number=number, scale=scale, start=match.start(1), end=end, attached=attached)
        )
    return found
