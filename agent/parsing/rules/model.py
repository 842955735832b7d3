"""Model names: a registry id when the name is known (exactly, or fuzzily for a misspelling, which is then noted as a
guess), else the size the name states (noted as an unknown model)."""

from __future__ import annotations

import re
from functools import cache

from rapidfuzz import fuzz, process

from agent.parsing.rules.scan import Scan, alt, rx, vocabulary
from tools.models import ModelArch, all_models, fuzzy_lookup, lookup, size_from_name

MAX_NAME_TOKENS = 7
FAMILY_TYPO_CUTOFF = 80.0
"""A word this close (rapidfuzz ratio) to a family word starts a model name when a size or version follows."""
_TOKEN = re.compile(r"[a-z0-9]+(?:\.\d+)*")
_SIZE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([bm])(?![\w])")


@cache
def _families() -> tuple[str, ...]:
    """Words that start a model name: the lexicon's families plus the first word of every registry name."""
    words = set(vocabulary()["model_families"])
    for arch in all_models():
        for name in (arch.id, *arch.aliases):
            head = re.match(r"[a-z]+", name.rsplit("/", 1)[-1].lower())
            if head and len(head.group(0)) >= 3:
                words.add(re.escape(head.group(0)))
    return tuple(sorted(words, key=len, reverse=True))


@cache
def _plain_families() -> tuple[str, ...]:
    """The family words that are plain letters, for matching misspellings."""
    return tuple(f for f in _families() if re.fullmatch(r"[a-z]+", f))


MODEL_FAMILIES = _families()
"""Words that start a model name; registry models resolve to an id, others still give their size."""


@cache
def _name_words() -> frozenset[str]:
    """Letter-only words that may continue a model name ('nemo', 'lite', 'maverick', 'instruct', 'b')."""
    words = {
        "b",
        "m",
        "instruct",
        "chat",
        "base",
        "it",
        "hf",
        "pt",
        "mini",
        "small",
        "medium",
        "large",
        "xl",
        "coder",
        "code",
        "math",
        "distill",
    }
    for arch in all_models():
        for name in (arch.id, arch.name, *arch.aliases):
            words.update(w for w in re.findall(r"[a-z]+", name.lower().rsplit("/", 1)[-1]) if len(w) > 1)
    return frozenset(words)


def _name_tokens(text: str, start: int) -> list[re.Match[str]]:
    """The tokens of a model name starting at `start`: the family word, then sizes, versions and name words."""
    tokens: list[re.Match[str]] = []
    pos = start
    while len(tokens) < MAX_NAME_TOKENS:
        match = _TOKEN.match(text, pos)
        if match is None:
            break
        word = match.group(0)
        if tokens and not (re.search(r"\d", word) or word in _name_words()):
            break
        tokens.append(match)
        if text.startswith("/", match.end()):
            tokens = []  # an organisation ("meta-llama/"): the name follows it
        gap = re.match(r"[\s_/-]|\s-\s?|-\s", text[match.end() :])
        pos = match.end() + (gap.end() if gap else 0)
        if gap is None and not _TOKEN.match(text, pos):
            break
    return tokens


def _starts(text: str) -> list[tuple[int, bool]]:
    """Where model names start: (position, written exactly) for family words and words a typo away from one."""
    starts = [(m.start(), True) for m in rx(r"(?<![\w-])" + alt(list(_families()))).finditer(text)]
    exact = {s for s, _ in starts}
    for m in re.finditer(r"(?<![\w/-])[a-z]{4,}(?=[\s_-]*\d)", text):
        if m.start() not in exact and process.extractOne(
            m.group(0), _plain_families(), scorer=fuzz.ratio, score_cutoff=FAMILY_TYPO_CUTOFF
        ):
            starts.append((m.start(), False))
    return sorted(starts)


def _org_start(text: str, start: int) -> int:
    """Start of an organisation prefix before a name ('meta-llama/' in 'meta-llama/llama-3.1-8b'), else `start`."""
    org = re.search(r"[\w.-]+/$", text[:start])
    return org.start() if org else start


def _resolve(words: list[str], exact_start: bool) -> tuple[ModelArch | None, int, bool]:
    """(registry model, how many words name it, whether it was a fuzzy guess): the longest exact prefix, else the
    longest fuzzily matched prefix that states a digit."""
    for k in range(len(words), 0, -1):
        arch = lookup(" ".join(words[:k])) if exact_start else None
        if arch is not None and not arch.approximate:
            return arch, k, False
    for k in range(len(words), 0, -1):
        name = " ".join(words[:k])
        if not exact_start and not re.search(r"\d", name):
            continue
        arch = fuzzy_lookup(name)
        if arch is not None and not arch.approximate:
            return arch, k, True
    return None, 0, False


def read_model(scan: Scan) -> None:
    """Model names ("Llama 3 70B", "Qwen2.5-7B-Instruct", "Qwen 2.5 14 B", "Mistrall 7B"): registry id (a fuzzy
    match is also noted as `model_guess`), else the size they state (noted as `unknown_model`)."""
    for start, exact_start in _starts(scan.text):
        if scan.is_claimed(start, start + 1):
            continue
        tokens = _name_tokens(scan.text, start)
        if not tokens or scan.text[tokens[-1].end() : tokens[-1].end() + 1] == "/":
            continue  # an organisation ("mistralai/"): the name follows it
        words = [t.group(0) for t in tokens]
        arch, k, guessed = _resolve(words, exact_start)
        if arch is not None:
            span_end = tokens[k - 1].end()
            if (
                _SIZE.search(" ".join(words[:k])) is None
                and not re.search(r"\d$", words[k - 1])
                and rx(r"[\s-]*\d+(?:\.\d+)?\s*b(?![\w])").match(scan.text, span_end)
            ):
                continue  # "Llama 3 e 70B": let the size reader see it
            scan.set("model", arch.id)
            scan.notes.setdefault("model_named", scan.text[start:span_end])
            if guessed:
                scan.notes.setdefault("model_guess", scan.text[start:span_end])
            scan.claim(_org_start(scan.text, start), span_end)
            return
        if not exact_start:
            continue
        name = scan.text[start : tokens[-1].end()]
        size = _SIZE.search(name)
        if size:
            scan.set("params_b", float(size.group(1)) * (1 if size.group(2) == "b" else 0.001))
            scan.notes.setdefault("unknown_model", name.strip(" -_/"))
            scan.claim(_org_start(scan.text, start), start + size.end())
            return
        scan.notes.setdefault("model_family", name.strip(" -_/"))
        scan.claim(start, tokens[-1].end())


def read_family_size(scan: Scan) -> None:
    """A family named without its size, the size stated apart ("Llama 3.2 da 3 miliardi", "Qwen 2.5 with 14 billion
    parameters", "Llama 3 e 70B"): the registry model of that family and size, where the family has one; else the
    newest of the models whose names hold every word said and that size ("the llama one, 8B": Llama 3.1 8B), as a
    guess. A model named with another size stated apart ("deepseek r1 distill, the 14b", where "deepseek" alone is
    DeepSeek V3) is the model of that name and size, where there is one."""
    size = scan.values.get("params_b")
    named, family = scan.notes.get("model_named"), scan.notes.get("model_family")
    if not size or not (family or named):
        return
    if "model" in scan.values:
        if named is None or size_from_name(scan.values["model"]) == size:
            return
        arch, guessed = _sized(named, size), False
    else:
        arch, guessed = lookup(f"{family} {size:g}b"), False
        if arch is None or arch.approximate:
            arch, guessed = _sized(str(family), size), True
    if arch is not None and not arch.approximate:
        scan.values.pop("params_b")
        scan.values["model"] = arch.id
        if guessed:
            scan.notes.setdefault("model_guess", f"{family} {size:g}B")


def _sized(name: str, size: float) -> ModelArch | None:
    """The newest registry model whose id holds every word of `name` and states `size` billions (None if none)."""
    said = _TOKEN.findall(name.lower())
    if not said:
        return None
    for words in (said, [w for w in said if re.search(r"[a-z]", w)]):  # "the llama one": "one" read as 1 is no version
        found = [
            arch
            for arch in all_models()
            if size_from_name(arch.id) == size
            and arch.id.startswith(said[0])  # the family first: "qwen" is not DeepSeek's Qwen distill
            and all(w in re.split(r"[-_.]", arch.id) or w in arch.id for w in words)
        ]
        if found:
            return max(found, key=lambda arch: [int(n) for n in re.findall(r"\d+", arch.id)])
    return None
