"""Number words in it/id/en: the word tables (prompts/<lang>/words/numbers.json), reading a run of number words
('dua ratus lima puluh', 'due mila', 'twenty four') and writing them as digits."""

from __future__ import annotations

import re
from functools import cache, lru_cache
from typing import Any

from agent.lexicon import language_words, load

ROLES = ("units", "tens", "times", "teen", "scales", "fractions")
ROLE_OF = {
    "units": "unit",
    "tens": "unit",
    "times": "times",
    "teen": "teen",
    "scales": "scale",
    "fractions": "fraction",
}
"""Table name in a prompts/<lang>/words/numbers.json file -> the role its words play when a run of number words is added up."""
NUMBER = r"(?<![\w.,])(?:\d{1,3}(?:[.,]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?)"
"""A number as typed, before deciding which separator is the decimal one."""
Piece = tuple[str, float]
"""One number-word piece: (role, value); roles: unit, times, teen, scale, fraction."""

USER_WORDS_KEPT = 8192
"""Words users typed whose number reading is kept (least recently used out first): their vocabulary has no end."""


@cache
def _neutral() -> dict[str, Any]:
    """The language-neutral part of the number lexicon (numbers.json)."""
    return load("numbers.json")


@cache
def tables(lang: str) -> dict[str, Any]:
    """One language's number words (prompts/<lang>/words/numbers.json)."""
    return language_words(lang, "numbers")


def languages() -> tuple[str, ...]:
    """The languages whose number words are read."""
    return tuple(_neutral()["languages"])


@cache
def _vocab() -> dict[str, tuple[str, Piece]]:
    """Every number word of every language -> (its language, its piece); the first language listed wins a clash."""
    vocab: dict[str, tuple[str, Piece]] = {}
    for lang in languages():
        glued_only = set(tables(lang)["bound"]) if tables(lang)["glued"] else set()
        for table in ROLES:
            for word, value in tables(lang)[table].items():
                if word not in glued_only:
                    vocab.setdefault(word, (lang, (ROLE_OF[table], float(value))))
    return vocab


@cache
def magnitudes() -> dict[str, float]:
    """Words and letters that multiply the digits before them ("20M", "2 juta", "5 grand", "100 miliardi")."""
    out = dict(_neutral()["letters"])
    for lang in languages():
        out.update({w: float(v) for w, v in tables(lang)["scales"].items()})
        out.update({w: float(v) for w, v in tables(lang)["suffixes"].items()})
    return out


# --- digits ------------------------------------------------------------------------------------------------------


def format_number(value: float) -> str:
    """Plain digits that every language reads back as `value` ('2500', '0.5'; no thousands separator)."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.6f}".rstrip("0").rstrip(".")


# --- number words ------------------------------------------------------------------------------------------------


@cache
def _glued_vocab() -> dict[str, Piece]:
    """Pieces of the languages that glue compounds into one word (Italian)."""
    return {
        w: (ROLE_OF[t], float(v))
        for lang in languages()
        if tables(lang)["glued"]
        for t in ROLES
        for w, v in tables(lang)[t].items()
    }


@lru_cache(maxsize=USER_WORDS_KEPT)
def _pieces(word: str, articles: bool = False) -> tuple[tuple[str, Piece], ...] | None:
    """(language, piece) for each part of a number word ('ventiquattro' -> venti, quattro); None otherwise."""
    word = word.lower()
    if word in _vocab():
        return (_vocab()[word],)
    if articles:
        for lang in languages():
            if word in tables(lang)["one_articles"]:
                return ((lang, ("unit", 1.0)),)
    for lang in languages():
        prefix = tables(lang).get("one_prefix")
        rest = word[len(prefix) :] if prefix and word.startswith(prefix) else ""
        hit = _vocab().get(rest)
        if hit and hit[0] == lang and hit[1][0] in ("times", "scale"):
            return ((lang, ("unit", 1.0)), hit)
    return _glued(word)


@lru_cache(maxsize=USER_WORDS_KEPT)
def _glued(word: str) -> tuple[tuple[str, Piece], ...] | None:
    """Split a glued compound ('duecentocinquantasei') into vocabulary pieces, longest head first."""
    vocab = _glued_vocab()
    if word in vocab:
        return (("it", vocab[word]),)
    for cut in range(len(word) - 1, 1, -1):
        head = vocab.get(word[:cut])
        if head is not None:
            rest = _glued(word[cut:])
            if rest is not None:
                return (("it", head),) + rest
    return None


def word_pieces(word: str, articles: bool = False) -> tuple[Piece, ...] | None:
    """The number-word pieces of one word, or None when it is not a number word; `articles` also reads the
    articles that mean one (Italian 'un')."""
    found = _pieces(word, articles)
    return None if found is None else tuple(piece for _, piece in found)


def combine(pieces: list[Piece] | tuple[Piece, ...]) -> float:
    """Value of a run of number-word pieces: 'two hundred forty', 'dua ratus lima puluh', 'due mila', 'mezzo miliardo'.

    `small` is what was said since the last multiplier, `group` the current group below a scale, `total` the
    closed groups: 'dua ratus lima puluh' = (2 x 100) + (5 x 10); 'one million two hundred thousand' = 1e6 + 200e3.
    """
    total = group = small = 0.0
    for role, value in pieces:
        if role in ("unit", "fraction") or role == "teen":
            small += value
        elif role == "times":
            group += (small or 1.0) * value
            small = 0.0
        else:
            total += ((group + small) or 1.0) * value
            group = small = 0.0
    return total + group + small


_WORD = re.compile(r"(?<![\w'])[^\W\d_]+(?![\w])")


def _one_prefix_stem(word: str) -> str | None:
    """'seminggu' -> 'minggu': a language's one-prefix before one of its listed stems (Indonesian se-)."""
    for lang in languages():
        prefix = tables(lang).get("one_prefix")
        if prefix and word.startswith(prefix) and word[len(prefix) :] in tables(lang).get("one_prefix_stems", []):
            return word[len(prefix) :]
    return None


@cache
def _phrase_pattern() -> tuple[re.Pattern[str], dict[str, float]]:
    """Regex for the whole phrases that mean a number ('a couple of', 'un paio di'), longest first."""
    phrases = {p: float(v) for lang in languages() for p, v in tables(lang)["phrases"].items()}
    alternation = "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in sorted(phrases, key=len, reverse=True))
    return re.compile(r"(?<![\w'])(" + alternation + r")(?![\w])", re.IGNORECASE), phrases


def _can_follow(previous: Piece, following: Piece) -> bool:
    """Whether a number-word piece may follow another inside one number ('twenty four', 'dua ratus', not 'four
    eight' or 'four twenty')."""
    (prev_role, prev_value), (role, value) = previous, following
    if role == "fraction":
        return prev_role == "unit"
    if role == "scale":
        return prev_role in ("unit", "times", "teen", "fraction") or (prev_role == "scale" and value > prev_value)
    if role == "times":
        return prev_role in ("unit", "teen")
    if role == "teen":
        return prev_role == "unit" and prev_value < 10
    if prev_role == "unit":
        return prev_value >= 20 and prev_value % 10 == 0 and value < 10
    return prev_role in ("times", "scale")


def _joins(lang: str, previous: Piece, gap: str, following: Piece) -> bool:
    """Whether `gap` between two number words of `lang` continues one number: spaces and hyphens; a joiner ('and',
    'e', 'dan') after a times/scale word or before a fraction ('hundred and twenty', 'two and a half'); an article
    between a fraction and a scale ('half a billion')."""
    if not _can_follow(previous, following):
        return False
    words = gap.strip().lower().split()
    table = tables(lang)
    if not words or words == ["-"]:
        return True
    if len(words) == 1 and words[0] in table["articles"]:
        return previous[0] == "fraction" and following[0] == "scale"
    if words[0] not in table["joiners"] or len(words) > 2 or (len(words) == 2 and words[1] not in table["articles"]):
        return False
    return following[0] == "fraction" or (previous[0] in ("times", "scale") and len(words) == 1)


def _runs(text: str) -> list[tuple[int, int, list[Piece], str | None]]:
    """Runs of number words: (start, end, pieces, the scale word that ends the run or None)."""
    tokens = [(m.start(), m.end(), m.group(0).lower()) for m in _WORD.finditer(text)]
    runs: list[tuple[int, int, list[Piece], str | None]] = []
    i = 0
    while i < len(tokens):
        start, end, word = tokens[i]
        found = _pieces(word)
        if found is None or word in _bound() or _hyphen_glued(text, start, end, tokens, i):
            i += 1
            continue
        article = _article_before(tokens, i)
        pieces, lang, last_word = [p for _, p in found], found[-1][0], word
        j = i + 1
        while j < len(tokens):
            k = _next_number_word(tokens, j, lang)
            nxt = _pieces(tokens[k][2]) if k is not None else None
            if (
                k is None
                or nxt is None
                or nxt[0][0] != lang
                or not _joins(lang, pieces[-1], text[end : tokens[k][0]], nxt[0][1])
            ):
                break
            pieces += [p for _, p in nxt]
            end, last_word = tokens[k][1], tokens[k][2]
            j = k + 1
        scale_word = _final_scale_word(last_word, pieces)
        alone = len(pieces) == 1 and not article
        if alone and _pronoun(tokens, i, lang):
            i = j
            continue  # "compared to this one", "the cheaper one": a thing, not a number
        if alone and (
            scale_word in _plural_scales() or (pieces[0][0] == "scale" and re.search(r"\d\s*$", text[:start]))
        ):
            i = j
            continue  # "thousands of rows"; "12 thousand" (the word is the digits' magnitude)
        runs.append((tokens[i - 1][0] if article else start, end, pieces, scale_word))
        i = j
    return runs


def _next_number_word(tokens: list[tuple[int, int, str]], j: int, lang: str) -> int | None:
    """Index of the next number word at j, or after at most two joiner/article words of `lang`; None otherwise."""
    glue = set(tables(lang)["joiners"]) | set(tables(lang)["articles"])
    for k in range(j, min(j + 3, len(tokens))):
        if _pieces(tokens[k][2]) is not None:
            return k
        if tokens[k][2] not in glue:
            return None
    return None


def _pronoun(tokens: list[tuple[int, int, str]], i: int, lang: str) -> bool:
    """Whether number word i stands for a thing ("this one", "which one", "the cheaper one"): a pronoun word of its
    language after a determiner of the list, or after "the" and an adjective of the list ("the llama one" is still
    read as a number, as a version; "the one GPU" too)."""
    rules = tables(lang).get("pronoun") or {}
    if tokens[i][2] not in rules.get("words", ()) or i == 0:
        return False
    if tokens[i - 1][2] in rules.get("after", ()):
        return True
    adjectives = rules.get("after_the") or []
    return (
        i >= 2 and tokens[i - 2][2] == "the" and any(re.fullmatch(pattern, tokens[i - 1][2]) for pattern in adjectives)
    )


@cache
def _bound() -> frozenset[str]:
    """Words that never start a number ('puluh', 'belas'; Italian elided pieces such as 'vent')."""
    return frozenset(w for lang in languages() for w in tables(lang)["bound"])


def _article_before(tokens: list[tuple[int, int, str]], i: int) -> bool:
    """Whether token i-1 is an article of token i's language and token i is a scale, times or fraction word."""
    if i == 0:
        return False
    found = _pieces(tokens[i][2])
    if found is None or len(found) != 1 or found[0][1][0] not in ("scale", "times", "fraction"):
        return False
    return tokens[i - 1][2] in tables(found[0][0])["articles"] and tokens[i][0] - tokens[i - 1][1] <= 2


def _hyphen_glued(text: str, start: int, end: int, tokens: list[tuple[int, int, str]], i: int) -> bool:
    """Whether a number word is glued by a hyphen to a word that is not a number ('one-shot', 'gpt-two-style')."""
    before = start > 0 and text[start - 1] == "-" and (i == 0 or _pieces(tokens[i - 1][2]) is None)
    after = end < len(text) and text[end] == "-" and (i + 1 >= len(tokens) or _pieces(tokens[i + 1][2]) is None)
    return before or after


@cache
def _plural_scales() -> frozenset[str]:
    """Scale words that never stand alone as a number ('thousands', 'milioni')."""
    return frozenset(w for lang in languages() for w in tables(lang)["plural_scales"])


def _final_scale_word(word: str, pieces: list[Piece]) -> str | None:
    """The scale word that ends a run ('thousand' in 'twelve thousand', 'mila' in 'duemila'), else None."""
    if pieces[-1][0] != "scale":
        return None
    for scale in sorted(magnitudes(), key=len, reverse=True):
        if len(scale) > 1 and word.endswith(scale) and magnitudes()[scale] == pieces[-1][1]:
            return scale
    return None


def words_to_digits(text: str) -> str:
    """Rewrite number words as digits ('otto GPU' -> '8 GPU', 'dua puluh empat' -> '24', 'duemila' -> '2 mila',
    'mezzo miliardo' -> '0.5 miliardo'); a run that ends in a scale keeps it as the digits' magnitude."""
    pattern, phrases = _phrase_pattern()
    text = pattern.sub(lambda m: format_number(phrases[re.sub(r"\s+", " ", m.group(1).lower())]), text)
    text = _digits_and_fraction(text)
    out: list[str] = []
    last = 0
    for start, end, pieces, scale_word in _runs(text):
        out.append(text[last:start])
        if scale_word:
            out.append(f"{format_number(combine(pieces[:-1]) or 1)} {scale_word}")
        else:
            out.append(format_number(combine(pieces)))
        last = end
    out.append(text[last:])
    return _one_prefix_stems("".join(out))


def _digits_and_fraction(text: str) -> str:
    """'1 setengah' -> '1.5', '2 and a half' -> '2.5': digits right before a fraction word (or joiner + fraction)."""
    fractions = {w: v for lang in languages() for w, v in tables(lang)["fractions"].items()}
    joiners = {w for lang in languages() for w in tables(lang)["joiners"]}
    pattern = re.compile(
        r"(?<![\w.,])(\d+)\s+(?:(?:"
        + "|".join(sorted(joiners))
        + r")\s+(?:an?\s+)?)?("
        + "|".join(sorted(fractions, key=len, reverse=True))
        + r")(?![\w])",
        re.IGNORECASE,
    )
    return pattern.sub(lambda m: format_number(int(m.group(1)) + fractions[m.group(2).lower()]), text)


def _one_prefix_stems(text: str) -> str:
    """'seminggu' -> '1 minggu': the one-prefix before a listed stem."""
    return _WORD.sub(lambda m: f"1 {stem}" if (stem := _one_prefix_stem(m.group(0).lower())) else m.group(0), text)


# --- quantities --------------------------------------------------------------------------------------------------


@cache
def _scale_pattern() -> re.Pattern[str]:
    """Regex for a number followed by an optional magnitude word."""
    scales = sorted(magnitudes(), key=len, reverse=True)
    long_words = [re.escape(s) for s in scales if len(s) > 1]
    letters = "".join(s for s in scales if len(s) == 1)
    return re.compile(
        rf"({NUMBER})(\s*(?:{'|'.join(long_words)})(?![a-z])|\s?[{letters}](?![\w]))?"
        r"(?:\s+(?:di|of)(?![\w]))?",
        re.IGNORECASE,
    )
