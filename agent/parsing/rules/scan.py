"""Shared machinery of the offline parser: the text being scanned, which spans are claimed, vocabulary regexes."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import cache
from typing import Any

from agent.language import Quantity, words_to_digits
from agent.lexicon import language_words, load
from contract.languages import LANGUAGES


@dataclass
class Scan:
    """Text being parsed, its numbers, and which spans are already claimed by a field."""

    text: str
    lang: str
    quantities: list[Quantity]
    claimed: list[tuple[int, int]] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)
    assumptions: list[str] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)
    """Readings that are not JobSpec fields: 'model_guess' (a fuzzily matched model name), 'unknown_model'."""
    refused: list[tuple[str, str, str]] = field(default_factory=list)
    """(field, value as written, reason) for numbers read for a field but not usable ('negative', 'out_of_range')."""
    per_unit_currency: str | None = None
    """The currency of an amount read as a price per hour or per GPU: a bare total beside it is in that currency."""
    example_tokens: int | None = None
    """One example's length the message states without an example count (a thread's job may have the count)."""
    text_bytes: float | None = None
    """The bytes of text a data set was sized in ("2 GB of text"), when its tokens were read from them."""

    def free(self) -> list[Quantity]:
        """Numbers no field has claimed yet."""
        return [q for q in self.quantities if not self.is_claimed(q.start, q.end)]

    def is_claimed(self, start: int, end: int) -> bool:
        """Whether any part of [start, end) is already used."""
        return any(start < b and a < end for a, b in self.claimed)

    def claim(self, start: int, end: int) -> None:
        """Mark [start, end) as used."""
        self.claimed.append((start, end))

    def written(self, q: Quantity) -> str:
        """A quantity as the refusal names it: as typed, or '1e+30' when it is too long to read."""
        typed = self.text[q.start : q.end]
        return typed if sum(c.isdigit() for c in typed) <= MAX_PLAIN_DIGITS else f"{q.value:.6g}"

    def refuse(self, name: str, written: str, reason: str) -> None:
        """Record a value read for `name` that the job cannot use (said in the answer, never applied)."""
        self.refused.append((name, written, reason))
        self.assumptions.append(f"{name} {written} not used: {reason}")

    def set(self, name: str, value: Any) -> None:
        """Set a field once: the first reading wins."""
        self.values.setdefault(name, value)


@cache
def vocabulary() -> dict[str, Any]:
    """The parser vocabulary: the mixed lists (agent/lexicon/parsing.json) and, per key, each language's own list
    (prompts/<lang>/words/parsing.json) as {lang: [...]}."""
    table = dict(load("parsing.json"))
    for lang in LANGUAGES:
        for key, entry in language_words(lang, "parsing").items():
            if key != "about":
                table.setdefault(key, {})[lang] = entry
    return table


def words(key: str) -> list[str]:
    """A vocabulary list, flattened when it is kept per language ({"it": [...], "id": [...], "en": [...]})."""
    entry = vocabulary()[key]
    return [w for lang in LANGUAGES for w in entry.get(lang, [])] if isinstance(entry, dict) else list(entry)


def alt(words: list[str]) -> str:
    """One regex alternation of vocabulary fragments."""
    return "(?:" + "|".join(words) + ")"


@cache
def rx(pattern: str) -> re.Pattern[str]:
    """Compile (and cache) a case-insensitive regex."""
    return re.compile(pattern, re.IGNORECASE)


def word(words: list[str]) -> re.Pattern[str]:
    """Whole-word regex for a vocabulary list."""
    return rx(r"(?<![\w-])" + alt(words) + r"(?![\w])")


CLITIC = r"(?:nya|ku|mu)?"
"""Indonesian -nya ("the"), -ku ("my"), -mu ("your"), written onto the keyword before them ("budgetnya 800rb")."""


def after(scan: Scan, pos: int, words: list[str], gap: str = r"[\s-]*") -> re.Match[str] | None:
    """Match one of `words` right after position `pos` (after spaces/hyphens)."""
    return rx(gap + alt(words) + r"(?![\w])").match(scan.text, pos)


def before(scan: Scan, pos: int, words: list[str], window: int = 30) -> re.Match[str] | None:
    """Match one of `words` ending within `window` characters before `pos` (no clause break in between)."""
    left = scan.text[max(0, pos - window) : pos]
    match = None
    for match in rx(r"(?<![\w-])" + alt(words) + CLITIC + r"(?![\w])").finditer(left):  # noqa: B007  (the last one)
        pass
    if match is None or re.search(r"[.;!?]", left[match.end() :]):
        return None
    return match


def cue_before(scan: Scan, pos: int, words: list[str], *, window: int, most_words: int) -> re.Match[str] | None:
    """A `before` match of `words` with at most `most_words` words, none a number, between it and `pos` ("budget turun
    jadi 2 jt", "epoch-nya jadi 2"; 0: right before it, "based in")."""
    found = before(scan, pos, words, window=window)
    if found is None:
        return None
    between = scan.text[max(0, pos - window) + found.end() : pos].split()
    return None if len(between) > most_words or any(ch.isdigit() for w in between for ch in w) else found


def prepare(text: str) -> str:
    """Normalise a message for parsing: NFKC, one apostrophe, lower case, number words as digits."""
    text = unicodedata.normalize("NFKC", text or "").replace("\u2019", "'").replace("\u00d7", "x")
    text = re.sub(r"\s+", " ", text).strip().lower()
    text = re.sub(r"(?<![\w])(rp\.?|idr|usd|eur)(?=\d)", r"\1 ", text)  # "Rp2jt" -> "rp 2jt"
    text = re.sub(r"(?<=\d)x(?=(?:rtx\s*)?[a-z]{1,2}\d)", "x ", text)  # "8xH100" -> "8x h100"
    text = re.sub(r"(?<![\w.,])x(?=\d)", "x ", text)  # "epoche x3", "H100 x8" -> "x 3", "x 8"
    text = re.sub(r"(?<=\d)\s*(?:giga(?:bytes?)?|gib)(?![\w])", "gb", text)  # "80 giga" -> "80gb"
    text = _POWER.sub(_expand_power, text)  # "10^9", "1e308" -> plain digits (read at their real size)
    return words_to_digits(text)


_POWER = re.compile(
    r"(?<![\w.,])(\d{1,6}(?:\.\d{1,6})?)(?:\s*(?:\^|\*\*)\s*|e)([+-]?\d{1,5})"
    r"(?![\d.,_])(?![^\W\d_]{2})"
)
"""A power written as 'base^exp', 'base**exp' or scientific notation ('1e308'; 'e' right after the digits), alone or
with a magnitude letter ('1e3B'), never inside a word."""
MAX_PLAIN_DIGITS = 15
"""A refused number with more digits than this is named in scientific notation ('1e+30'), as people write it."""
MAX_EXPONENT = 400
"""Larger powers are read as an overflowing number (then dropped), not spelled out."""


def _expand_power(match: re.Match[str]) -> str:
    """'10^9' -> '1000000000', '1e308' -> '1' and 308 zeros, '2^10' -> '1024'; absurd sizes -> 'inf'."""
    base, exponent = Decimal(match.group(1)), int(match.group(2))
    caret = not match.group(0)[len(match.group(1)) :].lstrip().startswith("e")
    try:
        if abs(exponent) > MAX_EXPONENT:
            raise InvalidOperation
        value = base**exponent if caret else base.scaleb(exponent)
        digits = format(value.normalize(), "f")
    except (InvalidOperation, OverflowError):
        return " inf "
    return digits if len(digits) <= MAX_EXPONENT + 2 else " inf "


def negative(scan: Scan, q: Quantity) -> bool:
    """Whether a minus sign is glued to the number ("budget -5"), not joining a range ("300-500")."""
    return re.search(r"(?:^|[\s:=$€(])-$", scan.text[max(0, q.start - 2) : q.start]) is not None


def unit_follows(scan: Scan, pos: int) -> bool:
    """Whether a unit word (tokens, examples, epochs, durations, money) follows `pos`: the number is not a GPU."""
    lex = vocabulary()
    units = [
        *lex["token_units"],
        *lex["example_units"],
        *lex["epoch_units"],
        *lex["seq_keywords"],
        *(w for words in lex["durations"].values() for w in words),
        *(w for forms in lex["currencies"].values() for w in forms["after"]),
    ]
    return after(scan, pos, units, gap=r"[\s-]*") is not None


def negated(scan: Scan, start: int, window: int = 28) -> bool:
    """Whether a negation word precedes `start` in the same clause (not one that asks: "why not spot?")."""
    low = max(0, start - window)
    left = scan.text[low:start]
    breaks = list(rx(r"[.;!?,]|(?<![\w])" + alt(vocabulary()["clause_breaks"]) + r"(?![\w])").finditer(left))
    if breaks:
        low += breaks[-1].end()
    negation = rx(r"(?<![\w'])" + alt(vocabulary()["negation_words"]) + r"(?![\w'])")
    return any(not asks(scan, low + found.start()) for found in negation.finditer(scan.text[low:start]))


def asks(scan: Scan, pos: int) -> bool:
    """Whether `pos` falls in a why-not question cue ("why not", "perché non", "kenapa tidak"): its negation asks
    about the option that follows, it does not refuse it."""
    return any(found.start() <= pos < found.end() for found in word(words("question_negations")).finditer(scan.text))
