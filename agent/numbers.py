"""Numbers as people type them in it/id/en chat: digit groups ("5.000.000", "1,5", "5,000"), number words ("otto",
"dua puluh", "a couple of") and magnitudes ("20M", "100 miliardi", "2 juta", "1.5B")."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache

from agent.lexicon import load

NUMBER = r"(?<![\w.,])(?:\d{1,3}(?:[.,]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?)"
"""A number as typed, before deciding which separator is the decimal one."""


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


@cache
def _data() -> dict:
    """The number-word lexicon."""
    return load("numbers.json")


def parse_number(raw: str, lang: str = "en") -> float:
    """Read '5.000.000', '1,5', '5,000', '1.5', '1.500' (thousands in it/id, 1.5 in en) as a float."""
    s = raw.strip()
    if re.fullmatch(r"\d{1,3}(?:\.\d{3}){2,}(?:,\d+)?", s):
        return float(s.replace(".", "").replace(",", "."))
    if re.fullmatch(r"\d{1,3}(?:,\d{3}){2,}(?:\.\d+)?", s):
        return float(s.replace(",", ""))
    if re.fullmatch(r"\d{1,3}\.\d{3}", s):
        return float(s.replace(".", "")) if lang in ("it", "id") else float(s)
    if re.fullmatch(r"\d{1,3},\d{3}", s):
        return float(s.replace(",", ""))
    if "," in s and "." in s:
        if s.rfind(",") > s.rfind("."):
            return float(s.replace(".", "").replace(",", "."))
        return float(s.replace(",", ""))
    return float(s.replace(",", "."))


def _format(value: float) -> str:
    """Digits for a number word's value."""
    return str(int(value)) if float(value).is_integer() else str(value)


@cache
def _word_pattern() -> re.Pattern[str]:
    """Regex matching any number word (longest first), Indonesian compounds included."""
    words = sorted(_data()["words"], key=len, reverse=True)
    return re.compile(r"(?<![\w-])(" + "|".join(re.escape(w) for w in words) + r")(?![\w-])", re.IGNORECASE)


_PHRASES = [
    (re.compile(r"(?<![\w.,])(\d+|satu|dua|tiga|empat|lima|enam|tujuh|delapan|sembilan)\s+setengah\b", re.IGNORECASE), "half"),
    (re.compile(r"\b(?:a\s+)?(?:couple|pair)\s+of\b", re.IGNORECASE), "2"),
    (re.compile(r"\bun\s+paio\s+di\b", re.IGNORECASE), "2"),
    (re.compile(r"\ba\s+dozen\b", re.IGNORECASE), "12"),
    (re.compile(r"\b(dua|tiga|empat|lima|enam|tujuh|delapan|sembilan)\s+(belas|puluh|ratus)\b", re.IGNORECASE), None),
    (re.compile(r"\bse(minggu|hari|jam|bulan|tahun|ratus|ribu|juta|miliar)\b", re.IGNORECASE), "1 \\1"),
]
_ID_DIGITS = {"satu": 1, "dua": 2, "tiga": 3, "empat": 4, "lima": 5, "enam": 6, "tujuh": 7, "delapan": 8, "sembilan": 9}


def _indonesian_compound(match: re.Match[str]) -> str:
    """'dua belas' -> 12, 'tiga puluh' -> 30, 'dua ratus' -> 200."""
    digit = _ID_DIGITS[match.group(1).lower()]
    kind = match.group(2).lower()
    return str(digit + 10 if kind == "belas" else digit * (10 if kind == "puluh" else 100))


def words_to_digits(text: str) -> str:
    """Rewrite number words as digits ('otto GPU' -> '8 GPU', 'dua puluh' -> '20'); everything else unchanged."""
    for pattern, replacement in _PHRASES:
        if replacement == "half":
            text = pattern.sub(lambda m: f"{_ID_DIGITS.get(m.group(1).lower(), m.group(1))}.5", text)
        elif replacement is None:
            text = pattern.sub(_indonesian_compound, text)
        else:
            text = pattern.sub(replacement, text)
    words = {k.lower(): v for k, v in _data()["words"].items()}
    scales = {k.lower() for k in _data()["scales"]}
    out: list[str] = []
    last = 0
    for match in _word_pattern().finditer(text):
        out.append(text[last:match.start()])
        word = match.group(1).lower()
        if word in scales and re.search(r"\d\s*$", "".join(out)):
            out.append(match.group(1))  # "twelve thousand" -> "12 thousand": a magnitude, read with its number
        else:
            out.append(_format(words[word]))
        last = match.end()
    out.append(text[last:])
    return "".join(out)


@cache
def _scale_pattern() -> re.Pattern[str]:
    """Regex for a number followed by an optional magnitude word."""
    scales = sorted(_data()["scales"], key=len, reverse=True)
    long_words = [re.escape(s) for s in scales if len(s) > 1]
    letters = "".join(s for s in scales if len(s) == 1)
    return re.compile(
        rf"({NUMBER})(\s*(?:{'|'.join(long_words)})(?![a-z])|\s?[{letters}](?![\w]))?"
        r"(?:\s+(?:di|of)(?![\w]))?", re.IGNORECASE)


def find_quantities(text: str, lang: str = "en") -> list[Quantity]:
    """Every number in `text` (already passed through `words_to_digits`), with its magnitude applied."""
    scales = {k.lower(): v for k, v in _data()["scales"].items()}
    found: list[Quantity] = []
    for match in _scale_pattern().finditer(text):
        try:
            number = parse_number(match.group(1), lang)
        except ValueError:
            continue
        word = (match.group(2) or "").strip().lower()
        scale = scales.get(word, 1.0)
        if not math.isfinite(number * scale):
            continue  # a number too large for a float is no quantity anyone means
        end = match.end() if match.group(2) else match.end(1)
        attached = end < len(text) and text[match.end(1):match.end(1) + 1].isalpha()
        found.append(Quantity(value=number * scale, number=number, scale=scale, start=match.start(1), end=end,
                              attached=attached))
    return found
