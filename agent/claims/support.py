"""Sentence-level support of LLM text: every sentence must be backed by the source (the draft, or tool results).

On top of agent/claims/check.py (every number and name is in the source), each sentence of the LLM text is read against
the source's own sentences ("units"; a tool result's records, see agent/claims/support_tools.py):

- never shown: links, e-mail addresses, phone numbers, requests for credentials, actions the tools cannot take,
  judgements no tool gives ("reliable", "affidabile", "terpercaya") unless the source says them;
- a yes/no verdict opening a sentence must open a source sentence too (no "Yes —" for a "No —" draft);
- a sentence must take most of its content words from the source (a sentence of framing words only passes);
- in each segment (a sentence cut at ';' and conjunctions), every pair of an entity (provider, GPU, instance) and
  a number or another entity must stand together in one source unit, when the source ties that number to one;
- a superlative or comparison ("cheapest", "più veloce", "lebih lambat") must sit in a source unit with the same
  word family and the same entities and numbers;
- a budget or deadline clause's stance (within / over, negated or not) must be one the source takes, and a clause
  keeps the negation of its closest source clause (by shared entities, numbers and content words).

Word lists are per language in prompts/<lang>/words/support.json (English is always read too: models slip into it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from agent.claims.text import Token, phrase_at, tokenize
from agent.lexicon import language_words
from contract.languages import LANGUAGES

MIN_SUPPORTED_WORDS = 0.5
"""A sentence needs at least this share of its content words in the source."""
MIN_WORD_CHARS = 4
STEM_CHARS = 5
"""Words compare on their first STEM_CHARS letters ('servono' / 'servirebbero' do not, 'interruptions' /
'interruption' do)."""
ENTITY = ("provider:", "gpu:", "id:")
URL = re.compile(
    r"(?i)\b(?:https?://|ftp://|www\.)\S+|\b(?:[a-z0-9-]+\.)+(?:com|net|org|io|ai|dev|app|it|id|co|"
    r"uk|de|eu|info|biz|xyz|me|us|cloud|sh|ly|gg|tv)\b(?:/\S*)?"
)
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
PHONE = re.compile(r"(?<![\w.,])\+?\d{1,4}(?:[ \-.]\d{2,5}){2,}(?![\w.,]?\d)")
MIN_PHONE_DIGITS = 7
SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\s*\n+\s*")
STANCE_BREAK = re.compile(r",\s+|:\s+|\s*[()]\s*|\s+[—–-]\s+")
VERDICT_START = re.compile(r"^[\W_]*([^\W\d_]+)[*_]*\s*[—–,.:;!-]", re.UNICODE)


def _read(language: str) -> dict[str, Any]:
    """One language's word file (empty when there is none)."""
    if language not in LANGUAGES:
        return {}
    return dict(language_words(language, "support"))


def _merge(a: Any, b: Any) -> Any:
    """Two word tables joined: lists concatenated without repeats, nested tables joined per key."""
    if a is None or b is None:
        return b if a is None else a
    if isinstance(a, dict):
        return {k: _merge(a.get(k), b.get(k)) for k in {*a, *b} if not k.startswith("_")}
    return list(dict.fromkeys([*a, *b]))


@cache
def words(language: str) -> dict[str, Any]:
    """The language's support words merged with English's (lists joined, nested tables joined per key)."""
    return _merge(_read(language), _read("en")) if language != "en" else _merge(_read("en"), {})


@dataclass(frozen=True)
class Unit:
    """One piece of the source (a draft sentence, a tool record): its entities, numbers and tokens."""

    text: str
    entities: frozenset[str]
    numbers: tuple[Any, ...]
    tokens: tuple[Token, ...]


def sentences(text: str) -> list[str]:
    """Sentences: cut at '.', '!', '?', ';' before a space, and at line breaks; list bullets dropped."""
    parts = (part.strip().lstrip("-•* ").strip() for part in SENTENCE_END.split(text))
    return [part for part in parts if re.search(r"\w", part)]


@cache
def _conjunctions(language: str) -> re.Pattern[str]:
    """A pattern that cuts a sentence at its conjunctions ('and', 'e', 'dan'...)."""
    joined = "|".join(re.escape(w) for w in sorted(words(language)["conjunctions"], key=len, reverse=True))
    return re.compile(rf"\s*,?\s+(?:{joined})\s+", re.IGNORECASE)


def segments(sentence: str, language: str) -> list[str]:
    """A sentence cut at its conjunctions: each piece says one thing about one subject."""
    return [part for part in _conjunctions(language).split(sentence) if re.search(r"\w", part)]


def make_unit(text: str, language: str) -> Unit:
    """A unit of text with its claims read by agent/claims/check.py."""
    from agent.claims.reading import extract

    claims = extract(text, language)
    return Unit(text, frozenset(n for n in claims.names if n.startswith(ENTITY)), claims.numbers, tuple(tokenize(text)))


@lru_cache(maxsize=256)
def draft_units(draft: str, language: str) -> tuple[Unit, ...]:
    """The draft's sentences as units."""
    return tuple(make_unit(sentence, language) for sentence in sentences(draft))


def has(tokens: tuple[Token, ...] | list[Token], phrases: list[str]) -> bool:
    """Whether any phrase occurs in the tokens."""
    return any(phrase_at(list(tokens), i, phrases) for i in range(len(tokens)))


def _tokens(text: str) -> list[Token]:
    """Tokens of a text, with every token in one clause (phrases may span the text's punctuation)."""
    return [Token(t.kind, t.text, 0) for t in tokenize(text)]


def blocked(candidate: str, source: str, language: str) -> list[str]:
    """Links, e-mail addresses, phone numbers, credential requests, claimed actions and judgements the source does
    not hold; numbers written in characters the checker does not read ('½', '²', other scripts' digits)."""
    lex, low = words(language), source.lower()
    problems = [f"link {m.group()!r}" for m in URL.finditer(candidate) if m.group().lower() not in low]
    problems += [f"e-mail address {m.group()!r}" for m in EMAIL.finditer(candidate) if m.group().lower() not in low]
    problems += [
        f"phone number {m.group()!r}"
        for m in PHONE.finditer(candidate)
        if len(re.sub(r"\D", "", m.group())) >= MIN_PHONE_DIGITS and m.group() not in source
    ]
    unreadable = sorted({c for c in candidate if c.isnumeric() and not ("0" <= c <= "9")})
    problems += [f"numbers the check cannot read ({''.join(unreadable)!r})"] if unreadable else []
    tokens, source_tokens = _tokens(candidate), _tokens(source)
    for key, what in (
        ("credentials", "a request for credentials"),
        ("actions", "an action the tools cannot take"),
        ("opinions", "a judgement no tool gives"),
    ):
        found = [p for p in lex[key] if has(tokens, [p]) and not has(source_tokens, [p])]
        problems += [f"{what} ({found[0]!r})"] if found else []
    return problems


def _same_number(claim: Any, source: Any, tolerance: bool) -> bool:
    """The claims module's number match, ignoring attached facts."""
    from agent.claims.reading import matches

    return matches(claim, source, tolerance)


def _bound(number: Any, units: tuple[Unit, ...], tolerance: bool) -> bool:
    """Whether the source ties this number to an entity (it stands in a unit that names one)."""
    return any(unit.entities and any(_same_number(number, n, tolerance) for n in unit.numbers) for unit in units)


def _together(items: list[Any], units: tuple[Unit, ...], tolerance: bool) -> bool:
    """Whether one unit holds every item (entity names and numbers)."""
    return any(
        all(
            (item in unit.entities)
            if isinstance(item, str)
            else any(_same_number(item, n, tolerance) for n in unit.numbers)
            for item in items
        )
        for unit in units
    )


def binding_problems(segment: Unit, units: tuple[Unit, ...], tolerance: bool) -> list[str]:
    """Pairs of an entity and a number (tied to an entity in the source) or an entity of another kind (a provider
    and a GPU) never found together; a list of providers, or of GPUs, is not a pair."""
    entities = sorted(segment.entities)
    problems = []
    for i, entity in enumerate(entities):
        for other in entities[i + 1 :]:
            if entity.split(":")[0] != other.split(":")[0] and not _together([entity, other], units, tolerance):
                problems.append(f"{entity} and {other} are not together in the source")
        for number in segment.numbers:
            if _bound(number, units, tolerance) and not _together([entity, number], units, tolerance):
                problems.append(f"number {number.text!r} does not belong to {entity} in the source")
    return problems


def order_family(tokens: list[Token] | tuple[Token, ...], language: str) -> list[tuple[str, str]]:
    """(family, degree) of every superlative or comparative word in the tokens ('cheap', 'superlative')."""
    found = []
    for family, degrees in words(language)["order"].items():
        for degree, phrases in degrees.items():
            if has(tokens, phrases):
                found.append((family, degree))
    return found


OPPOSITE = {"cheap": "expensive", "expensive": "cheap", "fast": "slow", "slow": "fast"}


def content_words(tokens: list[Token] | tuple[Token, ...], language: str) -> list[str]:
    """Words that carry content: long enough, not glue, not framing, not negation."""
    lex = words(language)
    skip = set(lex["stopwords"]) | set(lex["negators"])
    return [
        t.low
        for t in tokens
        if t.kind == "word"
        and len(t.text) >= MIN_WORD_CHARS
        and t.low not in skip
        and not any(t.low.startswith(f.rstrip("*")) if f.endswith("*") else t.low == f for f in lex["framing"])
    ]


def _stems(words_: list[str]) -> set[str]:
    """Words cut to their first STEM_CHARS letters."""
    return {w[:STEM_CHARS] for w in words_}


def content_problems(sentence: str, source_words: set[str], language: str) -> list[str]:
    """A sentence that does not take most of its content words from the source."""
    found = content_words(tokenize(sentence), language)
    if not found:
        return []
    shared = sum(1 for w in found if w[:STEM_CHARS] in source_words) / len(found)
    return [] if shared >= MIN_SUPPORTED_WORDS else [f"the sentence {sentence[:60]!r} is not in the source"]


def negated(tokens: list[Token] | tuple[Token, ...], language: str) -> bool:
    """Whether a clause says 'not' (one negation word or more: Italian 'non ... nulla' is one negation)."""
    return has(tokens, words(language)["negators"])


def stance(tokens: list[Token] | tuple[Token, ...], language: str) -> dict[str, bool]:
    """Topic -> fits (True) or not (False), for every budget/deadline topic the clause takes a stance on."""
    lex = words(language)
    excess, fit = has(tokens, lex["excess"]), has(tokens, lex["fit"])
    if not (excess or fit):
        return {}
    fits = (not excess) != negated(tokens, language)
    return {topic: fits for topic, phrases in lex["topics"].items() if has(tokens, phrases)}


def verdict_word(sentence: str, language: str) -> str | None:
    """'yes' or 'no' when the sentence opens with a verdict word set off by punctuation ('**No** —', 'Sì,')."""
    match = VERDICT_START.match(sentence)
    if not match:
        return None
    word, lex = match.group(1).lower(), words(language)
    return "yes" if word in lex["verdict_yes"] else "no" if word in lex["verdict_no"] else None


def _stance_units(units: tuple[Unit, ...], language: str) -> list[tuple[str, Unit]]:
    """Every unit cut at conjunctions, commas, colons, dashes and brackets (a negation's scope), as (text, unit)."""
    return [
        (piece, make_unit(piece, language))
        for unit in units
        for segment in segments(unit.text, language)
        for piece in STANCE_BREAK.split(segment)
        if re.search(r"\w", piece)
    ]


def _shared(a: Unit, b: Unit, language: str) -> int:
    """How much two clauses share: two points per entity or number, one per content word (by stem)."""
    numbers = sum(1 for n in a.numbers if any(_same_number(n, m, False) for m in b.numbers))
    names = _stems([e.split(":", 1)[1] for e in a.entities | b.entities])  # counted as entities already
    stems = (_stems(content_words(a.tokens, language)) & _stems(content_words(b.tokens, language))) - names
    return 2 * (len(a.entities & b.entities) + numbers) + len(stems)


MIN_MATCH = 2
"""A clause is compared with its closest source clause only when they share at least this much (see _shared)."""


def polarity_problems(segment: str, source: list[tuple[str, Unit]], language: str) -> list[str]:
    """A budget/deadline stance the source never takes, or the negation of the closest source clause flipped."""
    problems = []
    for piece in STANCE_BREAK.split(segment):
        tokens = _tokens(piece)
        if not tokens:
            continue
        for topic, fits in stance(tokens, language).items():
            if not any(stance(_tokens(text), language).get(topic) == fits for text, _ in source):
                problems.append(f"the source never says the {topic} {'fits' if fits else 'does not fit'}")
        unit = make_unit(piece, language)
        scored = [(_shared(unit, other, language), text) for text, other in source]
        best = max((score for score, _ in scored), default=0)
        if best >= MIN_MATCH and not any(
            negated(_tokens(text), language) == negated(tokens, language) for score, text in scored if score == best
        ):
            problems.append(f"{piece[:60]!r} turns the source's negation around")
    return problems


def order_problems(
    segment: Unit, sentence: Unit, units: tuple[Unit, ...], source_words: set[str], language: str
) -> list[str]:
    """A superlative or comparison that no source unit makes about the same entities and numbers."""
    problems = []
    for family, degree in order_family(segment.tokens, language):
        families = {family, OPPOSITE[family]} if degree == "comparative" else {family}
        holders = [u for u in units if any(f in families for f, _ in order_family(u.tokens, language))]
        items: list[Any] = sorted(segment.entities) + list(segment.numbers)
        if not items:
            items = sorted(sentence.entities) + list(sentence.numbers)
        if items and _together(items, tuple(holders), False):
            continue
        if not items and any(
            content_problems(segment.text, _stems(content_words(u.tokens, language)), language) == [] for u in holders
        ):
            continue
        problems.append(f"{segment.text[:60]!r}: the source does not say that ({family})")
    return problems


def draft_problems(candidate: str, draft: str, language: str) -> list[str]:
    """Every sentence of `candidate` checked against the draft's sentences (see the module docstring)."""
    units = draft_units(draft, language)
    source_words = _stems(content_words(tokenize(draft), language))
    opening = {verdict_word(s, language) for s in sentences(draft)} - {None}
    pieces = _stance_units(units, language)
    problems = blocked(candidate, draft, language)
    for sentence in sentences(candidate):
        verdict = verdict_word(sentence, language)
        if verdict and verdict not in opening:
            problems.append(f"the verdict {verdict!r} is not the source's")
        whole = make_unit(sentence, language)
        problems += content_problems(sentence, source_words, language)
        for text in segments(sentence, language):
            segment = make_unit(text, language)
            problems += binding_problems(segment, units, False)
            problems += order_problems(segment, whole, units, source_words, language)
            problems += polarity_problems(text, pieces, language)
    return problems
