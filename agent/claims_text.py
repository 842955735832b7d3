"""Reading text for the claim checker: tokens with clauses, digits in it/id/en style, number words, phrases.

Number words cover it/id/en ("dodici", "ventiquattro", "dua puluh empat", "twenty-four", "mezzo"), including glued
Italian compounds; the vocabulary and every other word list live in agent/claims_lexicon.json.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

LEXICON_FILE = Path(__file__).with_name("claims_lexicon.json")

_TOKEN = re.compile(r"""
 (?P<code>`[^`\n]+`)
|(?P<brk>\n|[.;:!?](?=\s|$)|,(?=\s)|[()\[\]|])
|(?P<ident>(?=[\w.-]*[^\W\d_])(?=[\w.-]*\d)[^\W_]+(?:[-_.][^\W_]+)*)
|(?P<num>\d+(?:[.,]\d+)*)
|(?P<word>[^\W\d_]+(?:-[^\W\d_]+)*)
|(?P<sym>[$€%×=≈<>/+])
""", re.VERBOSE)
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
    """The words the checker reads (agent/claims_lexicon.json)."""
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
        if kind == "word" and "-" in match.group() and all(_word_value(p) is not None for p in match.group().split("-")):
            tokens.extend(Token("word", part, clause) for part in match.group().split("-"))
            continue
        tokens.append(Token(kind, match.group(), clause))
    return tokens


def parse_digits(text: str, language: str) -> float:
    """A digit string's value: '1.234,5' (it/id) or '1,234.5' (en); a separator before 3 digits is a thousands one."""
    thousands = "," if language == "en" else "."
    parts = re.split(r"([.,])", text)
    out = parts[0]
    for sep, digits in zip(parts[1::2], parts[2::2]):
        out += digits if (sep == thousands and len(digits) == 3) else "." + digits
    try:
        return float(out)
    except ValueError:
        return float(re.sub(r"\D", "", text) or 0)


@cache
def _number_vocab() -> dict[str, tuple[str, float]]:
    """Number word -> (role, value): unit, fraction, times (x10/x100), teen (+10), scale (x1000...)."""
    words = lexicon()["number_words"]
    vocab: dict[str, tuple[str, float]] = {}
    for role, table in (("unit", words["units"]), ("fraction", words["fractions"]),
                        ("times", words["times_small"]), ("teen", words["teen"]), ("scale", words["scales"])):
        vocab.update({word: (role, float(value)) for word, value in table.items()})
    vocab.update({"cent": ("times", 100.0), "tré": ("unit", 3.0), "mil": ("scale", 1000.0)})
    return vocab


@cache
def word_pieces(word: str) -> tuple[tuple[str, float], ...] | None:
    """Split a (possibly glued Italian) number word into vocabulary pieces, or None when it is not a number."""
    vocab, word = _number_vocab(), word.lower()
    if word in vocab:
        return (vocab[word],)
    for cut in range(len(word) - 1, 1, -1):
        head, tail = word[:cut], word[cut:]
        if head in vocab:
            rest = word_pieces(tail)
            if rest is not None:
                return (vocab[head],) + rest
    return None


def _word_value(word: str) -> float | None:
    """The value of one number word ('ventiquattro' 24), None for other words."""
    pieces = word_pieces(word)
    return None if pieces is None else combine(list(pieces))


def combine(pieces: list[tuple[str, float]]) -> float:
    """Value of a run of number-word pieces: 'two hundred forty', 'dua puluh empat', 'due mila'."""
    total = current = 0.0
    for role, value in pieces:
        if role in ("unit", "fraction"):
            current += value
        elif role == "times":
            current = (current or 1.0) * value
        elif role == "teen":
            current += value
        else:
            total += (current or 1.0) * value
            current = 0.0
    return total + current


def phrase_at(tokens: list[Token], i: int, phrases: list[str]) -> int:
    """Length in tokens of the first phrase that starts at token i (last word may end in '*'), else 0."""
    for phrase in phrases:
        parts = [t.low for t in tokenize(phrase.rstrip("*"))] or [phrase]
        prefix = phrase.endswith("*")
        if i + len(parts) > len(tokens) or any(tokens[i + k].clause != tokens[i].clause for k in range(len(parts))):
            continue
        words = [tokens[i + k].low for k in range(len(parts))]
        if words[:-1] == parts[:-1] and (words[-1].startswith(parts[-1]) if prefix else words[-1] == parts[-1]):
            return len(parts)
    return 0
