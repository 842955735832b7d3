"""Words typed with two neighbouring letters swapped ("waht about", "2 epocsh", "exmaples"): a word the readers do
not know whose one swap (not of its first letter) gives exactly one word they listen for is read as that word.

The words listened for are the letters of every cue list and lexicon entry (agent/lexicon/*.json,
prompts/<lang>/words/*.json), four letters or more; the language detector's own cue words are never changed (a word
of one language is not a typo of another's: "tema" stays "tema", not "team")."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from agent.lexicon import language_words, load
from contract.languages import LANGUAGES

MIN_LETTERS = 4
LEXICONS = ("intent.json", "parsing.json", "numbers.json")
WORD_LISTS = ("acts", "parsing", "numbers", "support")
WORD = re.compile(rf"[^\W\d_]{{{MIN_LETTERS},}}")
ESCAPE = re.compile(r"\\[A-Za-z]")


def _strings(data: Any) -> Iterator[str]:
    """Every string in a JSON value (lists and objects walked; 'about' notes skipped)."""
    if isinstance(data, str):
        yield data
    elif isinstance(data, list):
        for item in data:
            yield from _strings(item)
    elif isinstance(data, dict):
        for key, value in data.items():
            if not key.startswith("about"):
                yield from _strings(value)


def _words(pattern: str) -> Iterator[str]:
    """The letter runs of a regex fragment ('epochs?' gives 'epochs' and 'epoch'), lower case."""
    for match in WORD.finditer(ESCAPE.sub(" ", pattern)):
        word = match.group(0).lower()
        yield word
        if pattern[match.end() : match.end() + 1] == "?":  # an optional last letter: both spellings
            yield word[:-1]


@cache
def listened_for() -> frozenset[str]:
    """Every word of four letters or more a cue list or lexicon entry names."""
    found: set[str] = set()
    for name in LEXICONS:
        for text in _strings(load(name)):
            found.update(_words(text))
    for language in LANGUAGES:
        for name in WORD_LISTS:
            for text in _strings(language_words(language, name)):
                found.update(_words(text))
    return frozenset(word for word in found if len(word) >= MIN_LETTERS)


@cache
def known_words() -> frozenset[str]:
    """Words of the three languages the detector knows (never read as typos)."""
    found: set[str] = set()
    for language in LANGUAGES:
        for text in _strings(language_words(language, "language")):
            found.update(_words(text))
    return frozenset(found)


def _swaps(word: str) -> set[str]:
    """The word with each pair of neighbouring letters after the first swapped."""
    return {word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in range(1, len(word) - 1) if word[i] != word[i + 1]}


def untangled(text: str) -> str:
    """The text with each swapped-letter typo of a word listened for replaced by that word (lower case)."""
    listened, known = listened_for(), known_words()

    def fix(match: re.Match[str]) -> str:
        word = match.group(0)
        lower = word.lower()
        if lower in listened or lower in known:
            return word
        found = _swaps(lower) & listened
        return found.pop() if len(found) == 1 else word

    return WORD.sub(fix, text)
