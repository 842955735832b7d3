"""The one number reader (agent/language/numbers.py): digits per language and number words, round-tripped through
independent formatters and spellers written here (not the reader's tables), and shared with the claim checker."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.claims.check import extract
from agent.language.numbers import find_quantities, parse_number, words_to_digits

EN_UNITS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
EN_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
IT_UNITS = [
    "zero",
    "uno",
    "due",
    "tre",
    "quattro",
    "cinque",
    "sei",
    "sette",
    "otto",
    "nove",
    "dieci",
    "undici",
    "dodici",
    "tredici",
    "quattordici",
    "quindici",
    "sedici",
    "diciassette",
    "diciotto",
    "diciannove",
]
IT_TENS = ["", "", "venti", "trenta", "quaranta", "cinquanta", "sessanta", "settanta", "ottanta", "novanta"]
ID_UNITS = ["nol", "satu", "dua", "tiga", "empat", "lima", "enam", "tujuh", "delapan", "sembilan"]


def spell_en(n: int, hyphen: bool = True) -> str:
    """English words for 1 <= n < 1e6 ('twenty-four', 'three hundred and five', 'twelve thousand')."""
    if n >= 1000:
        head, rest = divmod(n, 1000)
        return f"{spell_en(head, hyphen)} thousand" + (f" {spell_en(rest, hyphen)}" if rest else "")
    if n >= 100:
        head, rest = divmod(n, 100)
        return f"{EN_UNITS[head]} hundred" + (f" and {spell_en(rest, hyphen)}" if rest else "")
    if n < 20:
        return EN_UNITS[n]
    tens, unit = divmod(n, 10)
    return EN_TENS[tens] + (("-" if hyphen else " ") + EN_UNITS[unit] if unit else "")


def spell_it(n: int) -> str:
    """Italian words for 1 <= n < 1e6, glued as Italians write them ('ventotto', 'trentatré', 'duemilacento')."""
    if n >= 1000:
        head, rest = divmod(n, 1000)
        return ("mille" if head == 1 else spell_it(head) + "mila") + (spell_it(rest) if rest else "")
    if n >= 100:
        head, rest = divmod(n, 100)
        return ("" if head == 1 else IT_UNITS[head]) + "cento" + (spell_it(rest) if rest else "")
    if n < 20:
        return IT_UNITS[n]
    tens, unit = divmod(n, 10)
    word = IT_TENS[tens]
    if unit in (1, 8):
        word = word[:-1]
    return word + ("tré" if unit == 3 else IT_UNITS[unit] if unit else "")


def spell_id(n: int) -> str:
    """Indonesian words for 1 <= n < 1e6 ('dua puluh empat', 'seratus', 'dua belas ribu')."""
    if n >= 1000:
        head, rest = divmod(n, 1000)
        return ("seribu" if head == 1 else spell_id(head) + " ribu") + (f" {spell_id(rest)}" if rest else "")
    if n >= 100:
        head, rest = divmod(n, 100)
        return ("seratus" if head == 1 else ID_UNITS[head] + " ratus") + (f" {spell_id(rest)}" if rest else "")
    if n >= 20:
        tens, unit = divmod(n, 10)
        return f"{ID_UNITS[tens]} puluh" + (f" {ID_UNITS[unit]}" if unit else "")
    if n >= 10:
        return {10: "sepuluh", 11: "sebelas"}.get(n) or f"{ID_UNITS[n - 10]} belas"
    return ID_UNITS[n]


def written_value(text: str, lang: str) -> float:
    """The value of the one quantity the reader finds in `text`."""
    found = find_quantities(words_to_digits(text), lang)
    assert len(found) == 1, (text, found)
    return found[0].value


@settings(max_examples=120, deadline=None)
@given(n=st.integers(1, 999_999))
def test_number_words_round_trip_in_every_language(n: int) -> None:
    assert written_value(spell_en(n), "en") == n
    assert written_value(spell_en(n, hyphen=False), "en") == n
    assert written_value(spell_it(n), "it") == n
    assert written_value(spell_id(n), "id") == n


def format_digits(value: float, lang: str, decimals: int) -> str:
    """A number as a person writes it: en 1,234,567.5; it/id 1.234.567,5."""
    text = f"{value:,.{decimals}f}"
    return text if lang == "en" else text.replace(",", "_").replace(".", ",").replace("_", ".")


@settings(max_examples=150, deadline=None)
@given(
    whole=st.integers(0, 10**9),
    decimals=st.integers(0, 2),
    cents=st.integers(0, 99),
    lang=st.sampled_from(["it", "id", "en"]),
)
def test_digits_round_trip_in_every_language(whole: int, decimals: int, cents: int, lang: str) -> None:
    value = whole + (cents / 100 if decimals else 0)
    text = format_digits(value, lang, decimals)
    assert parse_number(text, lang) == pytest.approx(round(value, decimals))


@pytest.mark.parametrize(
    ("raw", "lang", "value"),
    [
        ("1.500", "it", 1500),
        ("1.500", "id", 1500),
        ("1,5", "it", 1.5),
        ("1,5", "id", 1.5),
        ("1,500", "en", 1500),
        ("1,500", "it", 1.5),
        ("1.5", "it", 1.5),
        ("0.500", "it", 0.5),
        ("2.000.000", "en", 2e6),
    ],
)
def test_ambiguous_digit_groups_read_in_the_languages_style(raw: str, lang: str, value: float) -> None:
    assert parse_number(raw, lang) == pytest.approx(value)


@pytest.mark.parametrize(
    ("text", "lang", "value"),
    [
        ("ventiquattro", "it", 24),
        ("dua puluh empat", "id", 24),
        ("twenty-four", "en", 24),
        ("twenty four", "en", 24),
        ("mezzo miliardo", "it", 5e8),
        ("satu setengah", "id", 1.5),
        ("half a billion", "en", 5e8),
        ("dua ratus lima puluh", "id", 250),
        ("duecentocinquantasei", "it", 256),
        ("un milione", "it", 1e6),
        ("two and a half", "en", 2.5),
        ("1 setengah", "id", 1.5),
        ("mille e cinquecento", "it", 1500),
        ("20k", "en", 20_000),
        ("3M", "it", 3e6),
        ("1.5B", "en", 1.5e9),
        ("2 mld", "it", 2e9),
        ("5 jt", "id", 5e6),
        ("300rb", "id", 300_000),
        ("2 juta", "id", 2e6),
        ("4 ribu", "id", 4000),
        ("5 grand", "en", 5000),
        ("sepuluh ribu", "id", 10_000),
        ("tre milioni", "it", 3e6),
    ],
)
def test_words_and_magnitudes(text: str, lang: str, value: float) -> None:
    assert written_value(text, lang) == pytest.approx(value)


@pytest.mark.parametrize("text", ["between four and eight GPUs", "three four", "thousands of rows", "one-shot"])
def test_separate_numbers_are_not_added_up(text: str) -> None:
    values = [q.value for q in find_quantities(words_to_digits(text), "en")]
    assert values in ([4, 8], [3, 4], [], [])


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("costa 1,500 euro", "it"),
        ("1.500 esempi", "it"),
        ("1,500 examples", "en"),
        ("ventiquattro GPU", "it"),
        ("dua puluh empat GPU", "id"),
        ("twenty-four GPUs", "en"),
    ],
)
def test_the_claim_checker_reads_numbers_as_the_parser_does(text: str, lang: str) -> None:
    parser = [q.value for q in find_quantities(words_to_digits(text), lang)]
    checker = [n.value for n in extract(text, lang).numbers]
    assert checker == parser


@settings(max_examples=150, deadline=None)
@given(
    text=st.lists(
        st.sampled_from(
            [
                "venti",
                "quattro",
                "duemila",
                "e",
                "mezzo",
                "un",
                "milione",
                "dua",
                "puluh",
                "ratus",
                "ribu",
                "belas",
                "satu",
                "setengah",
                "se",
                "seribu",
                "twenty",
                "four",
                "-",
                "and",
                "a",
                "half",
                "hundred",
                "thousand",
                "thousands",
                "1",
                "1.500",
                "2,5",
                "k",
                "jt",
                "cento",
                "cent",
                "vent",
                "of",
                "di",
            ]
        ),
        max_size=10,
    ).map(" ".join)
)
def test_any_run_of_number_words_reads_without_crashing(text: str) -> None:
    for lang in ("it", "id", "en"):
        for q in find_quantities(words_to_digits(text), lang):
            assert q.value >= 0 and q.value == pytest.approx(q.number * q.scale)
