"""Which language a chat message is in (it, id or en), tuned for short, mixed, jargon-heavy messages; numbers and
number words; swapped-letter typos of the words the readers listen for."""

from agent.language.detect import SUPPORTED, LanguageGuess, detect_language, normalise_language
from agent.language.numbers import (
    NUMBER,
    Quantity,
    combine,
    find_quantities,
    parse_number,
    word_pieces,
    words_to_digits,
)
from agent.language.typos import untangled

__all__ = [
    "NUMBER",
    "SUPPORTED",
    "LanguageGuess",
    "Quantity",
    "combine",
    "detect_language",
    "find_quantities",
    "normalise_language",
    "parse_number",
    "untangled",
    "word_pieces",
    "words_to_digits",
]
