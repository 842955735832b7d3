"""Which language a chat message is in (it, id or en), tuned for short, mixed, jargon-heavy messages.

Rule: the user's explicit choice wins; else detection when the message carries enough signal; else the previous
turn's language; else English. Detection counts cue words from `prompts/<lang>/words/language.json` (function words and
everyday domain words). English technical loan words (GPU, spot, budget, fine-tuning) are in no list, so "fine-tuning
pakai spot aman?" is Indonesian and "QLoRA su Llama 3 70B" Italian. A message clearly in another language (German,
French, Spanish, Portuguese, Dutch) is flagged `supported=False` and answered in English.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agent.lexicon import language_words, load
from contract.languages import LANGUAGES, Language

Supported = Language
SUPPORTED: tuple[Supported, ...] = LANGUAGES
STRONG, WEAK, AFFIX, OTHER_WORD, OTHER_CHAR = 2.0, 1.0, 0.5, 1.5, 1.0
MIN_SIGNAL = 1.0
"""A language needs at least this score to be detected at all."""
MIN_MARGIN = 1.0
"""...and must beat the runner-up by this much (or by a factor of two)."""
SWITCH_SIGNAL = 3.0
"""A thread keeps its language unless a message scores at least this much for another one ("ok passa a H100" and
"in rupiah?" inside an Italian chat stay Italian; a whole sentence in another language switches)."""
MIN_OTHER = 3.0
"""Score a fourth language needs before a message is called unsupported."""

_TOKEN = re.compile(r"(?<!\w)[^\W\d_]+(?:[-'][^\W\d_]+)*'?(?![\w])", re.UNICODE)
"""Words made of letters only: 'A100', '8B' and '4x' are names and numbers, not language cues."""


class LanguageGuess(BaseModel):
    """The language to answer in, whether the user wrote in a supported language, and where the choice came from."""

    model_config = ConfigDict(frozen=True)

    language: Supported = Field(description="Language to reply in: it, id or en.")
    supported: bool = Field(description="False when the text is clearly in a language gpu-advisor does not speak.")
    confidence: float = Field(ge=0, le=1, description="How sure the choice is, 0..1.")
    source: Literal["explicit", "previous", "detected"] = Field(description="What decided the language.")
    scores: dict[str, float] = Field(default_factory=dict, description="Cue-word score per language (diagnostics).")


def normalise_language(value: str) -> Supported:
    """Map 'it'/'Italian'/'bahasa'/... to a supported code; ValueError naming the choices otherwise."""
    key = " ".join(str(value).strip().lower().replace("_", "-").split("-")[0].split())
    names = _language_names()
    if key in names:
        return names[key]
    raise ValueError(f"unsupported language '{value}'; choose {', '.join(SUPPORTED[:-1])} or {SUPPORTED[-1]}")


@cache
def _language_names() -> dict[str, Supported]:
    """What people call each language ('italiano', 'bahasa', 'inglese'): its code and its word list's `names`."""
    return {name: code for code in SUPPORTED for name in (code, *language_words(code, "language").get("names", ()))}


@cache
def _lexicon() -> dict[str, dict[str, float]]:
    """Word -> weight for each supported language, from the data files."""
    table: dict[str, dict[str, float]] = {}
    for lang in SUPPORTED:
        data = language_words(lang, "language")
        words = {w.lower(): WEAK for w in data.get("weak", [])}
        words.update({w.lower(): STRONG for w in data.get("strong", [])})
        table[lang] = words
    return table


@cache
def _affixes() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """(prefixes, suffixes) per supported language: weak morphology cues for words in no list."""
    return {
        lang: (
            tuple(language_words(lang, "language").get("prefixes", ())),
            tuple(language_words(lang, "language").get("suffixes", ())),
        )
        for lang in SUPPORTED
    }


@cache
def _other_lexicon() -> tuple[dict[str, frozenset[str]], dict[str, str]]:
    """Function words and telltale characters of unsupported languages."""
    data = load("language_other.json")
    words = {lang: frozenset(w.lower() for w in ws) for lang, ws in data.items() if isinstance(ws, list)}
    return words, dict(data.get("chars", {}))


NUMBER_ROLES = ("units", "tens", "times", "teen", "scales", "fractions", "suffixes")
"""The parts of a language's number words (prompts/<lang>/words/numbers.json) that name numbers."""
_GLUED = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)?([^\W\d_]+)(?!\w)", re.UNICODE)
"""A number with a word glued to it ("100rb", "25mila")."""


@cache
def _number_cues() -> dict[str, Supported]:
    """Number words and number suffixes of exactly one language ("cinquanta", "ribu", "rb", "mila") that no other
    language's word list has: a cue for it, written alone or glued to digits ("100rb", "25mila")."""
    owners: dict[str, set[Supported]] = {}
    for lang in SUPPORTED:
        data = language_words(lang, "numbers")
        for role in NUMBER_ROLES:
            for word in data.get(role, ()):
                if len(word) >= 2:
                    owners.setdefault(word.lower(), set()).add(lang)
    lexicon = _lexicon()
    return {
        word: next(iter(langs))
        for word, langs in owners.items()
        if len(langs) == 1 and not any(word in lexicon[other] for other in SUPPORTED if other not in langs)
    }


def _clitic_language(word: str) -> Supported | None:
    """The language whose clitic ends a word in no list, on a base of at least three letters ("datasetnya")."""
    for lang in SUPPORTED:
        for clitic in language_words(lang, "language").get("clitics", ()):
            if word.endswith(clitic) and len(word) - len(clitic) >= 3 and word.isalpha():
                return lang
    return None


def tokens(text: str) -> list[str]:
    """Lower-case word tokens; Italian elisions ("dell'addestramento") split into article and word."""
    elisions = set(language_words("it", "language").get("elisions", ()))
    out: list[str] = []
    for raw in _TOKEN.findall(text.lower().replace("\u2019", "'").replace("`", "'")):
        head, sep, rest = raw.partition("'")
        if sep and head in elisions and rest:
            out.extend([head + "'", rest])
        else:
            out.append(raw.strip("'") if raw.endswith("'") and raw[:-1] not in elisions else raw)
    return out


@cache
def _loan_phrases() -> re.Pattern[str] | None:
    """English technical phrases Italian and Indonesian chat borrows whole ("full fine-tuning", "sequence length",
    "from scratch"), as one pattern: no cue for English, as single loan words are in no list."""
    phrases = language_words("en", "language").get("loan_phrases", ())
    if not phrases:
        return None
    joined = sorted((r"[\s-]*".join(map(re.escape, p.lower().split())) for p in phrases), key=len, reverse=True)
    return re.compile(r"(?<!\w)(?:" + "|".join(joined) + r")(?!\w)")


def _affix_score(word: str, lang: Supported) -> float:
    """Weak vote for a word in no list that looks like it belongs to `lang` by its shape."""
    if len(word) < 6 or "-" in word:
        return 0.0
    prefixes, suffixes = _affixes()[lang]
    if lang == "en":
        return AFFIX if word.endswith(suffixes) else 0.0
    if lang == "id":
        return AFFIX if word.endswith(suffixes) and word.startswith(prefixes) else 0.0
    return AFFIX if word.endswith(suffixes) else 0.0


def score_languages(text: str) -> tuple[dict[str, float], dict[str, float]]:
    """Cue-word scores for the supported languages and for the unsupported ones."""
    lexicon = _lexicon()
    other_words, other_chars = _other_lexicon()
    supported = {lang: 0.0 for lang in SUPPORTED}
    other = {lang: 0.0 for lang in other_words}
    loans = _loan_phrases()
    for word in tokens(loans.sub(" ", text.lower()) if loans else text):
        if word.endswith("'") and word in {e + "'" for e in language_words("it", "language").get("elisions", ())}:
            supported["it"] += STRONG
            continue
        known = False
        for lang in SUPPORTED:
            weight = lexicon[lang].get(word)
            if weight:
                supported[lang] += weight
                known = True
        cue = _number_cues().get(word)
        if cue is not None and word not in lexicon[cue]:  # "cinquanta", "setengah"
            supported[cue] += STRONG
            known = True
        if not known and (clitic := _clitic_language(word)) is not None:  # "datasetnya": a borrowed word, clitic on
            supported[clitic] += STRONG
            known = True
        if not known:
            for lang in SUPPORTED:
                supported[lang] += _affix_score(word, lang)
        for lang, words in other_words.items():
            if word in words:
                other[lang] += OTHER_WORD
            if any(ch in word for ch in other_chars.get(lang, "")):
                other[lang] += OTHER_CHAR
    for glued in _GLUED.finditer(text.lower()):  # "100rb", "25mila"
        cue = _number_cues().get(glued.group(1))
        if cue is not None:
            supported[cue] += STRONG
    return supported, other


def _borrowing(scores: dict[str, float]) -> Supported | None:
    """The language an even count between English and one other language goes to: Italian and Indonesian chat
    borrows English words ("budgetnya cuma 150rb, is that enough?"), English chat does not borrow theirs. None
    unless exactly those two tie at the top, each with at least two cue words."""
    top = max(scores.values())
    tied = [lang for lang, score in scores.items() if score == top]
    if top < 2 * STRONG or len(tied) != 2 or "en" not in tied:
        return None
    return next(lang for lang in tied if lang != "en")  # type: ignore[return-value]


def _decisive(scores: dict[str, float]) -> tuple[str, float, bool]:
    """Best language, a 0..1 confidence, and whether it beats the runner-up clearly enough."""
    ranked = sorted(scores.items(), key=lambda kv: kv[1], reverse=True)
    (best, top), second = ranked[0], (ranked[1][1] if len(ranked) > 1 else 0.0)
    if top <= 0:
        return best, 0.0, False
    clear = top >= MIN_SIGNAL and (top - second >= MIN_MARGIN or top >= 2 * second)
    confidence = (top - second) / top * min(1.0, top / 4.0)
    return best, round(max(0.0, min(1.0, confidence)), 3), clear


def detect_language(text: str, *, explicit: str | None = None, previous: str | None = None) -> LanguageGuess:
    """Choose the reply language: explicit choice, else confident detection, else previous turn, else English."""
    supported, other = score_languages(text or "")
    scores = {**supported, **{k: v for k, v in other.items() if v}}
    if explicit:
        return LanguageGuess(
            language=normalise_language(explicit), supported=True, confidence=1.0, source="explicit", scores=scores
        )
    fallback: Supported | None = normalise_language(previous) if previous else None
    best_other = max(other.values(), default=0.0)
    best_supported = max(supported.values())
    if best_other >= MIN_OTHER and best_other > 1.5 * best_supported:
        confidence = round(min(1.0, (best_other - best_supported) / best_other), 3)
        return LanguageGuess(language="en", supported=False, confidence=confidence, source="detected", scores=scores)
    best, confidence, clear = _decisive(supported)
    borrowed = _borrowing(supported)
    if borrowed is not None:
        best, confidence, clear = borrowed, 0.5, True
    if clear and (fallback is None or best == fallback or supported[best] >= SWITCH_SIGNAL):
        return LanguageGuess(language=best, supported=True, confidence=confidence, source="detected", scores=scores)
    if fallback is not None:
        return LanguageGuess(language=fallback, supported=True, confidence=0.5, source="previous", scores=scores)
    if confidence > 0:
        return LanguageGuess(language=best, supported=True, confidence=confidence, source="detected", scores=scores)
    return LanguageGuess(language="en", supported=True, confidence=0.0, source="detected", scores=scores)
