"""Reading the claims in a text: its numbers with unit and fact, and its names (providers, GPUs, regions, verdicts).

Claim checking for LLM text: every fact the LLM writes must be one the source (draft or tool results) holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

from agent.claims.text import (
    GLUED,
    GLUED_UNIT,
    Token,
    combine,
    lexicon,
    parse_digits,
    phrase_at,
    tokenize,
    word_pieces,
)

FACT_WINDOW = 8
"""A fact word further than this many tokens from a number (in its clause) does not label it."""
MIN_CONTENT_WORDS = 2
CONTENT_WORD_CHARS = 6
"""Shorter words are mostly glue ('need', 'with', 'della') and say little about content."""
MIN_OVERLAP = 0.2
"""At least this share of a reply's content words must come from its source (paraphrases share few)."""
MIN_ROUNDED_DIGITS = 2
"""A number written rounded (not exactly as the source has it) must keep this many significant digits ('$1/h' for
$1.2075/h does not; '$1.21/h' does)."""
SECONDS = {"seconds": 1.0, "minutes": 60.0, "hours": 3600.0, "days": 86_400.0}


@dataclass(frozen=True)
class Number:
    """A number claim: value, unit kind (money, percent, mem, hours...), currency, per hour, attached fact."""

    value: float
    kind: str | None
    currency: str | None
    per_hour: bool
    fact: str | None
    text: str

    def same_unit(self, other: Number) -> bool:
        """Units agree: same currency and per-hour for money; same kind where both name one (or both a time)."""
        if self.currency or other.currency:
            return self.currency == other.currency and self.per_hour == other.per_hour
        return (
            self.kind is None
            or other.kind is None
            or self.kind == other.kind
            or (self.kind in SECONDS and other.kind in SECONDS)
        )

    def in_units_of(self, other: Number) -> float:
        """This value in the other's unit (times converted: 1 minute is 60 seconds), else the value as it is."""
        if self.kind in SECONDS and other.kind in SECONDS:
            return self.value * SECONDS[self.kind] / SECONDS[other.kind]
        return self.value


@dataclass(frozen=True)
class Claims:
    """Everything checkable in a text."""

    numbers: tuple[Number, ...]
    names: frozenset[str]
    """GPUs (canonical), providers, identifiers and code spans, region words, currencies, verdict words."""
    absolutes: frozenset[str]
    invented: tuple[str, ...]
    """Names that look like an unknown provider ('evilcloud', 'provider X')."""
    words: tuple[str, ...]
    vocabulary: frozenset[str]
    """Every token of the text, lower case."""


@dataclass(frozen=True)
class ClaimCheck:
    """The verdict on an LLM text: ok, or the problems found (English, for logs and tests)."""

    ok: bool
    problems: tuple[str, ...] = ()


def _currency_at(tokens: list[Token], i: int) -> tuple[str | None, int]:
    """A currency written at token i and its length."""
    if i < 0 or i >= len(tokens):
        return None, 0
    units = lexicon()["units"]
    for code in ("USD", "EUR", "IDR"):
        length = phrase_at(tokens, i, units[code])
        if length:
            return code, length
    return None, 0


def _unit(tokens: list[Token], i: int, glued: str | None) -> tuple[str | None, str | None, bool]:
    """(kind, currency, per_hour) of the number at token i, read from the tokens around it."""
    units = lexicon()["units"]
    if glued:
        return glued, None, False

    def same(j):
        return 0 <= j < len(tokens) and tokens[j].clause == tokens[i].clause

    currency, length = _currency_at(tokens, i + 1) if same(i + 1) else (None, 0)
    j = i + 1 + length
    if currency is None and same(i - 1):
        currency, _ = _currency_at(tokens, i - 1)
    if currency:
        per_hour = same(j) and bool(phrase_at(tokens, j, units["per_hour"]))
        return "money", currency, per_hour
    if not same(i + 1):
        return None, None, False
    for kind in ("percent", "mem", "mem_tb", "mem_mb", "hours", "seconds", "minutes", "days", "tokens", "bits", "gpus"):
        if phrase_at(tokens, i + 1, units[kind]):
            return kind, None, False
    if tokens[i + 1].kind == "ident" and _gpu(tokens[i + 1].text):
        return "gpus", None, False
    return None, None, False


@lru_cache(maxsize=4096)
def _gpu(text: str) -> str | None:
    """Canonical GPU name of a token, if it is one."""
    try:
        from tools.gpus import canonical_gpu_name
    except ImportError:  # pragma: no cover
        return None
    if not re.search(r"\d", text):
        return None
    return canonical_gpu_name(text) or (canonical_gpu_name(text[:-1]) if text.endswith("s") else None)


@cache
def provider_names() -> dict[str, str]:
    """Every provider id, alias and display name (lower case) -> provider id."""
    from tools.providers import all_providers, provider_aliases

    names = {p.id: p.id for p in all_providers()} | {p.display_name.lower(): p.id for p in all_providers()}
    return names | {alias: target for alias, target in provider_aliases().items() if " " not in alias}


def _facts(tokens: list[Token]) -> list[tuple[int, int, str]]:
    """(first token, last token, fact) for every fact word or phrase in the text."""
    found = []
    for i in range(len(tokens)):
        for fact, phrases in lexicon()["facts"].items():
            length = phrase_at(tokens, i, phrases)
            if length:
                found.append((i, i + length - 1, fact))
    return found


def _nearest_fact(facts: list[tuple[int, int, str]], tokens: list[Token], i: int) -> str | None:
    """The fact nearest to token i in its clause (within FACT_WINDOW tokens); None when none, or two tie."""
    near = sorted(
        (min(abs(first - i), abs(last - i)), fact)
        for first, last, fact in facts
        if tokens[first].clause == tokens[i].clause and min(abs(first - i), abs(last - i)) <= FACT_WINDOW
    )
    if not near or (len(near) > 1 and near[1][0] == near[0][0] and near[1][1] != near[0][1]):
        return None
    return near[0][1]


@lru_cache(maxsize=512)
def extract(text: str, language: str) -> Claims:
    """Every checkable claim in a text written in `language` (cached: drafts are read once per paragraph)."""
    tokens = tokenize(text)
    facts = _facts(tokens)
    lex = lexicon()
    need_unit = set(lex["number_words"]["need_unit"])
    not_numbers = set(lex["number_words"]["not_numbers"])
    numbers: list[Number] = []
    names: set[str] = set()
    invented: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        value, glued, end = None, None, i + 1
        if token.kind == "num":
            value = parse_digits(token.text, language)
        elif token.kind == "ident" and (m := GLUED.match(token.text)):
            value = parse_digits(m.group(1), language) * {"k": 1e3, "m": 1e6}.get(m.group(2).lower(), 1.0)
            glued = GLUED_UNIT.get(m.group(2).lower())
        elif token.kind == "word" and token.low not in not_numbers and word_pieces(token.text) is not None:
            pieces = []
            while (
                end - 1 < len(tokens)
                and tokens[end - 1].kind == "word"
                and tokens[end - 1].low not in not_numbers
                and word_pieces(tokens[end - 1].text)
            ):
                pieces.extend(word_pieces(tokens[end - 1].text) or ())
                end += 1
            end -= 1
            single = end == i + 1 and token.low in need_unit
            if (
                not single
                or _unit(tokens, i, None)[0] not in (None, "gpus")
                or (end < len(tokens) and phrase_at(tokens, end, lex["units"]["hours"]))
            ):
                value = combine(pieces)
        if value is not None:
            kind, currency, per_hour = _unit(tokens, end - 1, glued)
            numbers.append(
                Number(
                    round(value, 6),
                    kind,
                    currency,
                    per_hour,
                    _nearest_fact(facts, tokens, i),
                    " ".join(t.text for t in tokens[i:end]),
                )
            )
            i = max(end, i + 1)
            continue
        if token.kind == "code":
            names.add("id:" + token.low.strip("`"))
        elif token.kind == "ident":
            gpu = _gpu(token.text)
            names.add("gpu:" + gpu if gpu else "id:" + token.low)
        elif token.kind in ("word", "sym"):
            names |= _word_names(tokens, i, invented)
        i += 1
    absolutes = {
        phrase.rstrip("*")
        for phrase in lex["absolute"]
        if any(phrase_at(tokens, k, [phrase]) for k in range(len(tokens)))
    }
    words = tuple(t.low for t in tokens if t.kind == "word" and len(t.text) >= CONTENT_WORD_CHARS)
    return Claims(
        tuple(numbers), frozenset(names), frozenset(absolutes), tuple(invented), words, frozenset(t.low for t in tokens)
    )


def _word_names(tokens: list[Token], i: int, invented: list[str]) -> set[str]:
    """Names a word token carries: provider, currency, region word, verdict word; flags provider-shaped inventions."""
    lex, token, names = lexicon(), tokens[i], set()
    if token.low in provider_names():
        names.add("provider:" + provider_names()[token.low])
    currency, _ = _currency_at(tokens, i)
    if currency:
        names.add("currency:" + currency)
    if token.low in lex["region_words"]:
        names.add("region:" + token.low)
    if token.low in lex["verdict_words"]:
        names.add("verdict:" + token.low)
    if (
        token.kind == "word"
        and token.low not in provider_names()
        and any(
            token.low.endswith(shape.lstrip("*")) and len(token.low) > len(shape.lstrip("*"))
            for shape in lex["provider_shapes"]
        )
    ):
        invented.append(token.low)
    if token.low in lex["provider_nouns"] and i + 1 < len(tokens) and tokens[i].clause == tokens[i + 1].clause:
        following = tokens[i + 1]
        if following.kind in ("word", "ident") and (following.text[:1].isupper() or len(following.text) == 1):
            invented.append(following.low)
    return names


def matches(claim: Number, source: Number, tolerance: bool) -> bool:
    """The same value (exactly, or rounded as written when `tolerance`) in a compatible unit."""
    if not claim.same_unit(source) and not (tolerance and source.kind is None and source.currency is None):
        return False  # tool results (JSON) carry bare numbers: any unit the claim names is theirs to say
    value = claim.in_units_of(source)
    if not tolerance or abs(value - source.value) < 1e-9:
        return abs(value - source.value) < 1e-9
    if len(re.sub(r"\D", "", claim.text).lstrip("0")) < MIN_ROUNDED_DIGITS:
        return False
    decimals = len(claim.text.split(",")[-1]) if "," in claim.text and not claim.text.endswith(",") else 0
    decimals = max(decimals, len(claim.text.split(".")[-1]) if "." in claim.text else 0)
    step = 0.5 * 10 ** -min(decimals, 6) + 1e-9
    return any(
        abs(value - target) <= step * max(1.0, abs(target) * 1e-9) for target in (source.value, source.value * 100)
    )
