"""Spot/on-demand, method, precision, optimizer, checkpointing, providers and regions."""

from __future__ import annotations

import re
from functools import cache

from agent.parsing.rules.scan import Scan, after, alt, asks, cue_before, negated, rx, vocabulary, word, words
from tools.catalog import place_names


def _method_patterns() -> dict[str, list[str]]:
    """The lexicon's method patterns, plus full fine-tuning as an intensifier next to a fine-tune verb in any of the
    languages ("fully fine-tune", "affinare completamente", "fine-tuning penuh", "full FT")."""
    patterns = {method: list(found) for method, found in vocabulary()["methods"].items()}
    verbs, full = alt(words("finetune_verbs")), alt(words("full_intensifiers"))
    patterns["full_finetune"] += [full + r"[\s-]+" + verbs, verbs + r"[\s-]+" + full]
    return patterns


def methods_named(text: str) -> list[str]:
    """Every fine-tuning method the text names, in the order written, refused ones too ("why QLoRA and not LoRA?":
    qlora, lora): what a question weighing two methods is about."""
    found = [
        (match.start(), method)
        for method, patterns in _method_patterns().items()
        for match in word(patterns).finditer(text)
    ]
    return list(dict.fromkeys(method for _start, method in sorted(found)))


def read_spot(scan: Scan) -> None:
    """Spot/preemptible allowed or refused ("posso usare istanze spot", "tidak boleh pakai spot", "on-demand only");
    on-demand named with no word on spot, outside a question, is its choice."""
    lex = vocabulary()
    if word(lex["on_demand_only"]).search(scan.text):
        scan.set("interruptible_ok", False)
        return
    for match in word(lex["spot_words"]).finditer(scan.text):
        if scan.is_claimed(match.start(), match.end()):
            continue
        negative = (
            negated(scan, match.start())
            or after(
                scan,
                match.end(),
                [
                    r"(?:instances?|istanze|instans|vms?|gpus?|machines?|macchine)?\s*,?\s*"
                    + alt(lex["spot_negative_after"])
                ],
                gap=r"\s*",
            )
            is not None
        )
        scan.set("interruptible_ok", not negative)
        return
    for match in word([r"on[\s-]?demand"]).finditer(scan.text):  # "EU-only, on-demand, deadline 7 days": a choice
        sentence = re.search(r"[^.;!?]*[.;!?]?", scan.text[match.start() :])
        if sentence and "?" in sentence.group(0):  # "how much is it on-demand?": what a question asks about
            continue
        if not scan.is_claimed(match.start(), match.end()) and not negated(scan, match.start()):
            scan.set("interruptible_ok", False)
            return


GENERIC_METHOD_WORD = re.compile(r"adapt\w*|adattator\w*|peft", re.IGNORECASE)
"""Words that say LoRA only when no method is named beside them ("adapter: qlora" is QLoRA)."""


def read_flags(scan: Scan) -> None:
    """Method, precision, optimizer and gradient checkpointing when named."""
    lex = vocabulary()
    mentions = []
    for method, patterns in _method_patterns().items():
        for match in word(patterns).finditer(scan.text):
            if scan.is_claimed(match.start(), match.end()):
                continue
            low = max(0, match.start() - 16)
            refused = rx(r"(?<![\w])" + alt(lex["method_negators"]) + r"\s*(?:the\s+|il\s+|la\s+|un\s+)?$")
            negator = refused.search(scan.text[low : match.start()])
            if negator and not asks(scan, low + negator.start()):  # "not QLoRA" refuses it; "why not QLoRA?" asks
                continue
            mentions.append((match.start(), method, bool(GENERIC_METHOD_WORD.fullmatch(match.group(0)))))
    named = [m for m in mentions if not m[2]] or mentions  # "adapter: qlora": the method named, not the generic word
    if named:
        scan.set("method", min(named)[1])
    for key in ("precision", "optimizer"):
        for value, patterns in lex[key].items():  # the most specific named and not refused (lexicon order)
            if any(switched(scan, match) is not False for match in word(patterns).finditer(scan.text)):
                scan.set(key, value)  # "fp32 murni (jangan mixed precision)": fp32
                break
    match = word(lex["gradient_checkpointing"]).search(scan.text)
    if match:
        scan.set("gradient_checkpointing", switched(scan, match) is not False)


def switched(scan: Scan, match: re.Match[str]) -> bool | None:
    """Whether a setting the text names is switched on or off: a word after it ("grad_ckpt=off", "checkpointing
    attivato", "mixed precision: no") or a negation before it ("no mixed precision", "senza checkpointing"); None
    when neither says."""
    lex = vocabulary()
    gap = r"\s*(?:[:=]\s*|\(\s*)?"
    if after(scan, match.end(), [alt(lex["setting_off_after"])], gap=gap) is not None:
        return False
    if negated(scan, match.start(), window=20):  # "no gradient checkpointing on the A100"
        return False
    return True if after(scan, match.end(), [alt(lex["setting_on_after"])], gap=gap) is not None else None


def read_places(scan: Scan) -> None:
    """Providers and regions when named."""
    lex = vocabulary()
    providers = [
        pid
        for pid, names in lex["providers"].items()
        if any(
            not negated(scan, m.start(), 12) and not scan.is_claimed(m.start(), m.end())
            for m in word(names).finditer(scan.text)
        )
    ]
    if providers:
        scan.set("providers", providers)
    regions = [
        m.group(0)
        for m in rx(
            r"(?<![\w-])(?:(?:us|eu|ap|ca|sa|me|af|il|mx)-(?:east|west|north|south|central|northeast|southeast|northwest|southwest)-\d"
            r"|(?:us|europe|asia|australia|northamerica|southamerica|me|africa)-(?:east|west|north|south|central|northeast|"
            r"southeast|northwest|southwest)\d+)(?![\w-])"
        ).finditer(scan.text)
    ]
    regions += _place_words(scan)
    if regions:
        scan.set("regions", list(dict.fromkeys(regions)))


@cache
def _place_pattern() -> tuple[str, dict[str, str]]:
    """Regex alternation of every place word (tools/data/regions.json's names and the lexicon's), and word -> key."""
    lex = vocabulary()
    keys = {re.escape(name): key for name, key in place_names().items()}
    keys.update({fragment: key for key, fragments in lex["regions"].items() for fragment in fragments})
    return alt(sorted(keys, key=len, reverse=True)), keys


def _place_words(scan: Scan) -> list[str]:
    """Places after a prefix ('in Europa', 'di Singapura atau Jepang') or before a suffix ('EU only'), as table keys
    (tools.catalog.regions expands them into the catalog's regions)."""
    lex = vocabulary()
    places, keys = _place_pattern()
    joiner = r"\s*(?:" + alt(words("region_joiners")) + r")\s*(?:the\s+)?"
    chain = rx(
        r"(?<![\w-])(?:"
        + alt(lex["region_prefixes"])
        + r")(?:\s+|(?<=['’]))(?:the\s+)?("  # an elided preposition joins its place: "dall'Europa"
        + places
        + r"(?:"
        + joiner
        + places
        + r")*)(?![\w-])"
    )
    suffixed = rx(  # "EU-only", "Eropa atau Asia boleh"
        r"(?<![\w-])("
        + places
        + r"(?:"
        + joiner
        + places
        + r")*)(?:\s+|-)(?:"
        + alt(lex["region_suffixes"])
        + r")(?![\w])"
    )
    found: list[str] = []
    for match in [*chain.finditer(scan.text), *suffixed.finditer(scan.text)]:
        if (
            scan.is_claimed(match.start(1), match.end(1))
            or negated(scan, match.start(), 12)
            or _where_one_is(scan, match)
        ):
            continue
        for name in rx(r"(?<![\w-])" + places + r"(?![\w-])").findall(match.group(1)):
            found.append(_key_of(name, keys))
    return found


def _where_one_is(scan: Scan, match: re.Match[str]) -> bool:
    """Whether the place says where someone is ("the client is based in Germany", "Tim kami di Jakarta", "sono a
    Milano"): no wish for where the job runs."""
    return cue_before(scan, match.start(), words("person_place"), window=24, most_words=0) is not None


def _key_of(name: str, keys: dict[str, str]) -> str:
    """The table key of a place word as found ('singapura' -> 'singapore', 'european' -> 'europe')."""
    low = re.sub(r"\s+", " ", name.lower())
    if low in place_names():
        return place_names()[low]
    return next((key for fragment, key in keys.items() if re.fullmatch(fragment, low, re.IGNORECASE)), low)
