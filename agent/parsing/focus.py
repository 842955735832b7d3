"""The number field a turn is about when the number and its field come in different turns: "the number of examples
is wrong" (or "if I add epochs, how much?") names a field without its value, and the bare number of the next turn
is that field's; "16" said alone names a value without its field, and "epochs" next says which.

The thread keeps the half it was given (`focus`: {"field", "mode", "topic", "with"} or {"value"}) for one turn only;
"with" holds the other settings a what-if named beside the open field ("a longer context, on an L4?").
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from agent.language import Quantity, find_quantities
from agent.parsing.corrections import FRACTIONAL_FIELDS
from agent.parsing.rules.data import SEQ_K_POWERS  # '4k' said of a sequence is 4,096 tokens
from agent.parsing.rules.scan import alt, prepare, vocabulary
from contract.languages import LANGUAGES

FILLER_WORDS = 2
"""A number said alone may come with this many other words ("ok, 16", "16 then", "facciamo 16")."""


def _every_language(key: str) -> dict[str, list[str]]:
    """A per-language table of word lists (prompts/<lang>/words/parsing.json `key`), every language's lists of one
    name joined (people mix languages)."""
    merged: dict[str, list[str]] = {}
    for lang in LANGUAGES:
        for name, found in vocabulary()[key][lang].items():
            merged.setdefault(name, []).extend(found)
    return merged


@cache
def field_patterns() -> dict[str, re.Pattern[str]]:
    """Per field, the words that name it without a number, every language's (prompts/<lang>/words/parsing.json
    "field_names": "the epochs", "jumlah GPU", not "the GPU", which is the card), an Indonesian '-nya' allowed."""
    merged = _every_language("field_names")
    return {
        name: re.compile(r"(?<![\w])" + alt(found) + r"(?:-?nya)?(?![\w])", re.IGNORECASE)
        for name, found in merged.items()
    }


def says_number(text: str, lang: str) -> bool:
    """Whether the message holds any number (digits or number words: "una L4" says one)."""
    return bool(find_quantities(prepare(text), lang))


def fields_named(text: str) -> list[str]:
    """Every number field the message names by its word, in the word lists' order ("which budget and how many
    epochs?": budget, epochs); whether a value comes with them is the parser's to say."""
    prepared = prepare(text)
    named = [name for name, pattern in field_patterns().items() if pattern.search(prepared)]
    if "seq_len" in named and "dataset_tokens" in named:  # "how many tokens per sequence": the sequence
        named.remove("dataset_tokens")
    return named


def named_field(text: str, lang: str) -> str | None:
    """The one number field the message names by its word ("the number of examples is wrong", "kalau epoch-nya
    ditambah?"); None when it names none or several."""
    named = fields_named(text)
    return named[0] if len(named) == 1 else None


def lone_number(text: str, lang: str) -> Quantity | None:
    """The one number, in digits, of a message that says little else ("16", "ok, 45000", "2 allora"); None
    otherwise."""
    if not re.search(r"\d", text):
        return None  # "the cheapest one?" says no number
    prepared = prepare(text)
    found = find_quantities(prepared, lang)
    if len(found) != 1:
        return None
    rest = prepared[: found[0].start] + " " + prepared[found[0].end :]
    return found[0] if len(re.findall(r"\w+", rest)) <= FILLER_WORDS else None


def number_said_alone(text: str, lang: str) -> str | None:
    """The lone number of a message as written ("16", "4k"), for the thread to keep until a field takes it."""
    q = lone_number(text, lang)
    return prepare(text)[q.start : q.end] if q is not None else None


def field_value(field: str, q: Quantity, spec: dict[str, Any]) -> dict[str, Any]:
    """{field: the number as that field's value} ({} when it cannot be: none, or a budget without a currency)."""
    if q.value <= 0:
        return {}
    if field == "budget":
        budget = spec.get("budget")
        return {"budget": {"amount": q.value, "currency": budget["currency"]}} if budget else {}
    if field in FRACTIONAL_FIELDS:
        return {field: q.value}
    if field == "seq_len" and q.scale == 1000 and q.number in SEQ_K_POWERS:
        return {field: int(q.number) * 1024}
    return {field: int(round(q.value))}


def focused(text: str, lang: str, focus: dict[str, Any] | None, spec: dict[str, Any]) -> dict[str, Any]:
    """The field the thread's focus and this message make together: a lone number for the field the last turn
    named, or a field named alone for the number the last turn said; {} otherwise."""
    if not focus or not spec:
        return {}
    if focus.get("field"):
        q = lone_number(text, lang)
        value = field_value(focus["field"], q, spec) if q is not None else {}
        return {**(focus.get("with") or {}), **value} if value else {}  # the what-if's other settings with it
    if focus.get("value") is not None:
        field = named_field(text, lang)
        if field is None:
            return {}
        q = find_quantities(prepare(str(focus["value"])), lang)
        return field_value(field, q[0], spec) if q else {}
    return {}


FACTORS = {"double": 2.0, "triple": 3.0, "half": 0.5}
"""What the scale words multiply a setting by; "times" words take the number before them ("10 kali lipat")."""


@cache
def _scale_patterns() -> dict[str, re.Pattern[str]]:
    """Per scale word kind (times, double, triple, half, data), every language's words (prompts/<lang>/words/
    parsing.json "scale_words")."""
    patterns = {kind: alt(found) for kind, found in _every_language("scale_words").items() if found}
    patterns["times"] = r"(\d+(?:[.,]\d+)?)\s*" + patterns["times"]
    return {kind: re.compile(r"(?<![\w.,])" + p + r"(?![\w])", re.IGNORECASE) for kind, p in patterns.items()}


def scaled(text: str, lang: str, spec: dict[str, Any]) -> dict[str, Any]:
    """{field: the job's value scaled} when the message scales one of the job's settings by a factor ("10 times the
    data", "datanya jadi 10 kali lipat", "raddoppia le epoche", "half the examples"); the data is the job's data
    field (its tokens, else its examples); {} when no factor, no setting, or the job has no value to scale."""
    prepared = prepare(text)
    patterns = _scale_patterns()
    times = patterns["times"].search(prepared)
    factor = float(times.group(1).replace(",", ".")) if times else None
    for kind, multiplier in FACTORS.items():
        if factor is None and kind in patterns and patterns[kind].search(text):  # before "half" becomes 0.5
            factor = multiplier
    field = named_field(text, lang)
    if field is None and patterns["data"].search(prepared):
        field = next((name for name in ("dataset_tokens", "dataset_examples") if spec.get(name)), None)
    if not factor or factor <= 0 or field is None or field == "budget" or not spec.get(field):
        return {}
    value = float(spec[field]) * factor
    return {field: value if field in FRACTIONAL_FIELDS else max(1, round(value))}
