"""Reading text for the claim checker: tokens with clauses, digits in it/id/en style, number words, phrases.

Digits and number words ("dodici", "ventiquattro", "dua puluh empat", "twenty-four", "mezzo") are read by the
parser's own number reader (agent/language/numbers.py, word tables in prompts/<lang>/words/numbers.json), so the parser and
the checker agree on "1,500" in every language; the checker's other word lists live in agent/claims/claims_lexicon.json.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from agent.language import combine, parse_number
from agent.language import word_pieces as number_word_pieces

LEXICON_FILE = Path(__file__).with_name("claims_lexicon.json")

_TOKEN = re.compile(
    r"""
 (?P<code>`[^`\n]+`)
|(?P<brk>\n|[.;:!?](?=\s|$)|,(?=\s)|[()\[\]|])
|(?P<ident>(?=[\w.-]*[^\W\d_])(?=[\w.-]*\d)[^\W_]+(?:[-_.][^\W_]+)*)
|(?P<num>\d+(?:[.,]\d+)*)
|(?P<word>[^\W\d_]+(?:-[^\W\d_]+)*)
|(?P<sym>[$€%×=≈<>/+])
""",
    re.VERBOSE,
)
GLUED = re.compile(r"^(\d+(?:[.,]\d+)?)(gib|gb|g|h|x|k|m|b)$", re.IGNORECASE)
GLUED_UNIT = {"gib": "mem", "gb": "mem", "g": "mem", "h": "hours", "x": "gpus", "b": "params"}


@dataclass(frozen=True)
class Token:
    """One token: its kind (code, ident, num, word, sym), text, and the clause it sits in."""

    kind: str
    text: str
    clause: int

    @property
    def low(self) -> str:
        """Lower-case text."""
        return self.text.lower()


@cache
def lexicon() -> dict:
    """The words the checker reads (agent/claims/claims_lexicon.json)."""
    return json.loads(LEXICON_FILE.read_text(encoding="utf-8"))


def tokenize(text: str) -> list[Token]:
    """Tokens with clause numbers; markdown emphasis is dropped, breaks only advance the clause counter."""
    text = text.replace("**", " ").replace("__", " ").replace("’", "'")
    tokens, clause = [], 0
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup or ""
        if kind == "brk":
            clause += 1
            continue
        if (
            kind == "word"
            and "-" in match.group()
            and all(_word_value(p) is not None for p in match.group().split("-"))
        ):
            tokens.extend(Token("word", part, clause) for part in match.group().split("-"))
            continue
        tokens.append(Token(kind, match.group(), clause))
    return tokens


def parse_digits(text: str, language: str) -> float:
    """A digit string's value in the language's style: the parser's own reader (agent.language.numbers.parse_number)."""
    return parse_number(text, language)


def word_pieces(word: str) -> tuple[tuple[str, float], ...] | None:
    """A (possibly glued Italian) number word's pieces, or None: the parser's reader, with Italian 'un' as one."""
    return number_word_pieces(word, articles=True)


def _word_value(word: str) -> float | None:
    """The value of one number word ('ventiquattro' 24), None for other words."""
    pieces = word_pieces(word)
    return None if pieces is None else combine(list(pieces))


@cache
def phrase_parts(phrase: str) -> tuple[str, ...]:
    """A phrase's words as the tokenizer reads them (lower case), without a trailing '*'."""
    return tuple(t.low for t in tokenize(phrase.rstrip("*"))) or (phrase,)


_Index = tuple[dict[str, list[tuple[tuple[str, ...], bool]]], list[tuple[tuple[str, ...], bool]]]


@lru_cache(maxsize=1024)
def _index(phrases: tuple[str, ...]) -> _Index:
    """Phrases by their first word, and the one-word prefix phrases (cached per phrase list: word lists are fixed)."""
    by_first: dict[str, list[tuple[tuple[str, ...], bool]]] = {}
    prefixes: list[tuple[tuple[str, ...], bool]] = []
    for phrase in phrases:
        parts, prefix = phrase_parts(phrase), phrase.endswith("*")
        if prefix and len(parts) == 1:
            prefixes.append((parts, prefix))
        else:
            by_first.setdefault(parts[0], []).append((parts, prefix))
    return by_first, prefixes


def phrase_at(tokens: list[Token], i: int, phrases: list[str]) -> int:
    """Length in tokens of the first phrase that starts at token i (last word may end in '*'), else 0."""
    if i < 0 or i >= len(tokens):
        return 0
    by_first, prefixes = _index(tuple(phrases))
    first = tokens[i].low
    for parts, prefix in by_first.get(first, ()):
        if i + len(parts) > len(tokens) or any(tokens[i + k].clause != tokens[i].clause for k in range(len(parts))):
            continue
        words = [tokens[i + k].low for k in range(len(parts))]
        if words[:-1] == list(parts[:-1]) and (words[-1].startswith(parts[-1]) if prefix else words[-1] == parts[-1]):
            return len(parts)
    return 1 if any(first.startswith(parts[0]) for parts, _ in prefixes) else 0
