"""Deterministic offline parser: a chat message in Italian, Indonesian or English -> JobSpec fields.

The three vocabularies in `agent/lexicon/parsing.json` are applied together (people mix languages); the language only
decides how ambiguous digit groups read ("1.500" is 1500 in it/id, 1.5 in en) and a bare budget's currency. Each
number is claimed by one field at most, in a fixed order: money, model names, GPU counts, sizes, data, training
settings, durations.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from agent.lexicon import load
from agent.numbers import NUMBER, Quantity, find_quantities, words_to_digits
from tools.models import lookup

try:  # canonical GPU names come from the GPU table module
    from tools.gpus import canonical_gpu_name
except ImportError:  # pragma: no cover - only while tools/gpus.py is missing
    def canonical_gpu_name(raw: str) -> str | None:  # type: ignore[misc]
        """Fallback while the GPU table is missing: no GPU is recognised."""
        return None

MODEL_FAMILIES = (
    "llama", "codellama", "mistral", "mixtral", "qwen", "gemma", "phi", "gpt-?2", "gpt-?j", "gpt-?neox", "bert", "roberta",
    "falcon", "deepseek", "yi", "olmo", "pythia", "bloom", "opt", "starcoder", "vicuna", "stablelm", "smollm", "granite",
    "internlm", "baichuan", "chatglm", "nemotron", "jamba", "dbrx", "t5", "flan-t5", "command-r", "zephyr", "tinyllama",
    "orca", "solar", "sailor", "sahabat-?ai", "komodo", "minerva", "cerbero", "velvet", "llamantino", "aya", "bloomz",
)
"""Words that start a model name; registry models resolve to an id, others still give their size."""

SEQ_K_POWERS = {1, 2, 4, 8, 16, 32, 64, 128, 256}
"""'4k context' means 4096 tokens: a k-size that is a power of two counts in units of 1024."""


@dataclass
class _Scan:
    """Text being parsed, its numbers, and which spans are already claimed by a field."""

    text: str
    lang: str
    quantities: list[Quantity]
    claimed: list[tuple[int, int]] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)
    assumptions: list[str] = field(default_factory=list)

    def free(self) -> list[Quantity]:
        """Numbers no field has claimed yet."""
        return [q for q in self.quantities if not self.is_claimed(q.start, q.end)]

    def is_claimed(self, start: int, end: int) -> bool:
        """Whether any part of [start, end) is already used."""
        return any(start < b and a < end for a, b in self.claimed)

    def claim(self, start: int, end: int) -> None:
        """Mark [start, end) as used."""
        self.claimed.append((start, end))

    def set(self, name: str, value: Any) -> None:
        """Set a field once: the first reading wins."""
        self.values.setdefault(name, value)


@cache
def _lex() -> dict[str, Any]:
    """The parser vocabulary."""
    return load("parsing.json")


def _alt(words: list[str]) -> str:
    """One regex alternation of vocabulary fragments."""
    return "(?:" + "|".join(words) + ")"


@cache
def _rx(pattern: str) -> re.Pattern[str]:
    """Compile (and cache) a case-insensitive regex."""
    return re.compile(pattern, re.IGNORECASE)


def _word(words: list[str]) -> re.Pattern[str]:
    """Whole-word regex for a vocabulary list."""
    return _rx(r"(?<![\w-])" + _alt(words) + r"(?![\w])")


def _after(scan: _Scan, pos: int, words: list[str], gap: str = r"[\s-]*") -> re.Match[str] | None:
    """Match one of `words` right after position `pos` (after spaces/hyphens)."""
    return _rx(gap + _alt(words) + r"(?![\w])").match(scan.text, pos)


def _before(scan: _Scan, pos: int, words: list[str], window: int = 30) -> re.Match[str] | None:
    """Match one of `words` ending within `window` characters before `pos` (no clause break in between)."""
    left = scan.text[max(0, pos - window):pos]
    match = None
    for match in _rx(r"(?<![\w-])" + _alt(words) + r"(?![\w])").finditer(left):
        pass
    if match is None or re.search(r"[.;!?]", left[match.end():]):
        return None
    return match


def prepare(text: str) -> str:
    """Normalise a message for parsing: NFKC, one apostrophe, lower case, number words as digits."""
    text = unicodedata.normalize("NFKC", text or "").replace("\u2019", "'").replace("\u00d7", "x")
    text = re.sub(r"\s+", " ", text).strip().lower()
    text = re.sub(r"(?<![\w])(rp\.?|idr|usd|eur)(?=\d)", r"\1 ", text)  # "Rp2jt" -> "rp 2jt"
    text = re.sub(r"(?<=\d)x(?=(?:rtx\s*)?[a-z]{1,2}\d)", "x ", text)  # "8xH100" -> "8x h100"
    text = re.sub(r"(?<![\w.,])x(?=\d)", "x ", text)  # "epoche x3", "H100 x8" -> "x 3", "x 8"
    text = re.sub(r"(?<=\d)\s*(?:giga(?:bytes?)?|gib)(?![\w])", "gb", text)  # "80 giga" -> "80gb"
    return words_to_digits(text)


# --- money -------------------------------------------------------------------------------------------------------

def _budget(scan: _Scan) -> None:
    """Budgets with a currency sign or word ("$100", "150 euro", "Rp 5.000.000", "2 juta rupiah")."""
    currencies = _lex()["currencies"]
    per_time = _lex()["per_time"]
    last_end = 0
    for q in scan.free():
        currency = None
        end = q.end
        for code, forms in currencies.items():
            if _rx(_alt(forms["before"]) + r"\s*$").search(scan.text[max(0, q.start - 6):q.start]):
                currency = code
                break
            match = _after(scan, q.end, forms["after"], gap=r"\s*")
            if match:
                currency, end = code, match.end()
                break
        if currency is None:
            continue
        scan.claim(q.start, end)
        if _after(scan, end, per_time, gap=r"\s*") or _rx(r"(?:per|/)\s*$").search(scan.text[:q.start]):
            scan.assumptions.append(f"{scan.text[q.start:end]} read as a price per hour, not a budget for the job")
            continue
        value = _money_value(scan, q)
        if value > 0:
            previous = scan.values.get("budget")
            if previous is None:
                scan.set("budget", {"amount": value, "currency": currency})
                last_end = end
            elif previous["currency"] == currency and value > previous["amount"] and _RANGE_GAP.fullmatch(
                    scan.text[last_end:q.start]):
                scan.values["budget"] = {"amount": value, "currency": currency}  # "$300 to $500": up to 500
    if "budget" in scan.values:
        _budget_range_end(scan, last_end)


def _money_value(scan: _Scan, q: Quantity) -> float:
    """An amount of money: "1.500" is 1500 in every language (prices have two decimals, not three)."""
    raw = re.match(NUMBER, scan.text[q.start:])
    if raw and re.fullmatch(r"\d{1,3}\.\d{3}", raw.group(0)):
        return float(raw.group(0).replace(".", "")) * q.scale
    return q.value


def _budget_range_end(scan: _Scan, after: int) -> None:
    """The top of a range whose second amount has no currency ("Rp 3jt - 5jt", "$300-500"): the budget is the top."""
    budget = scan.values["budget"]
    for q in scan.free():
        if q.start < after:
            continue
        if re.fullmatch(r"\s*(?:-|–|~|to|a|sampai|hingga|s/d)\s*", scan.text[after:q.start]) and \
                _money_value(scan, q) > budget["amount"] and not _unit_follows(scan, q.end) and not _rx(r"\s*(?:x\s*)?[a-z]{1,3}\d").match(
                    scan.text, q.end):
            scan.values["budget"] = {"amount": _money_value(scan, q), "currency": budget["currency"]}
            scan.claim(q.start, q.end)
        return


_RANGE_GAP = re.compile(r"\s*(?:-|–|~|to|and|e|a|o|or|sampai|hingga|s/d|dan|atau)\s*(?:\$|€|us\$|rp\.?|idr|usd|eur)?\s*",
                        re.IGNORECASE)
"""What joins the two ends of a money range once the first amount and its currency are read."""


_WEAK_BUDGET_WORDS = ("ho", "have", "punya", "max", "massimo", "maksimal", "maks", "under", "below", "less than",
                      "lebih dari", "more than", "più di", "piu di")
"""Budget words that also precede other limits: they need money evidence (a rupiah magnitude or 'budget' first)."""


def _rupiah_scale(scan: _Scan, q: Quantity) -> bool:
    """Whether the number is written with an Indonesian magnitude used for money ("2jt", "500rb", "1,5 juta")."""
    return _rx(r"[\d.,]+\s*(?:jt|jta|juta|rb|rbu|ribu)").fullmatch(scan.text[q.start:q.end]) is not None


def _bare_budget(scan: _Scan) -> None:
    """A number right after a budget word with no unit ("budget 500", "anggaran 5 juta")."""
    if "budget" in scan.values:
        return
    for q in scan.free():
        keyword = _before(scan, q.start, _lex()["budget_keywords"], window=16)
        if keyword is None or _rx(r"^\s*[a-z]").match(scan.text, q.end) and not _after(
                scan, q.end, [r"di\s+budget", r"budget"]) and not _rupiah_scale(scan, q):
            continue
        if keyword.group(0) in _WEAK_BUDGET_WORDS and not _rupiah_scale(scan, q) and not _before(
                scan, keyword.start(), _lex()["budget_keywords"], window=12):
            continue  # "max 8" alone is not money; "budget max 2jt", "lebih dari 1,5 jt" are
        if _after(scan, q.end, _lex()["per_time"], gap=r"\s*"):
            continue  # a price per hour, not a budget for the job
        value = _money_value(scan, q)
        currency = "IDR" if _rupiah_scale(scan, q) else \
            {"it": "EUR", "id": "IDR" if value >= 10_000 else "USD"}.get(scan.lang, "USD")
        scan.claim(q.start, q.end)
        scan.set("budget", {"amount": value, "currency": currency})
        scan.assumptions.append(f"budget {value:g} has no currency; read as {currency}")
        return


# --- model -------------------------------------------------------------------------------------------------------

_NAME_PART = r"(?:[\s_/-]*(?:v?\d+(?:\.\d+)*[a-z]?|\d+x\d+b|\d+(?:\.\d+)?[bm]|mini|small|medium|large|xl|base|instruct|chat|it|hf|coder|code|math)(?![\w.]))"


def _model(scan: _Scan) -> None:
    """Model names ("Llama 3 70B", "Qwen2.5-7B-Instruct", "Mixtral 8x7B"): registry id, else the size they state."""
    families = _alt(list(MODEL_FAMILIES))
    pattern = _rx(r"(?<![\w-])(?:[\w.-]+/)?(?:meta-)?" + families + r"[\w.]*(?:" + _NAME_PART + r"){0,4}")
    for match in pattern.finditer(scan.text):
        pieces = list(re.finditer(r"[\w.]+", match.group(0).replace("/", " ").replace("-", " ").replace("_", " ")))
        words = [piece.group(0) for piece in pieces]
        span_end = match.end()
        arch = None
        for k in range(len(words), 0, -1):
            arch = lookup(" ".join(words[:k]))
            if arch is not None:
                span_end = match.start() + pieces[k - 1].end()  # "Mistral 7B 3 epoch": the "3" is not the name's
                break
        size = re.search(r"(?<![\w.])(\d+(?:\.\d+)?)([bm])(?![\w])", match.group(0))
        if arch is not None and (not arch.approximate):
            stated = float(size.group(1)) * (1 if size.group(2) == "b" else 0.001) if size else None
            if stated is None and re.search(r"\d+(?:\.\d+)?\s*[bm]?$", match.group(0)) is None and \
                    _rx(r"[\s-]*\d+(?:\.\d+)?\s*b(?![\w])").match(scan.text, span_end):
                continue  # "Llama 3 e 70B": let the size reader see it
            scan.set("model", arch.id)
            scan.claim(match.start(), span_end)
            return
        if size:
            scan.set("params_b", float(size.group(1)) * (1 if size.group(2) == "b" else 0.001))
            scan.claim(match.start(), span_end)
            return
        scan.claim(match.start(), span_end)


# --- GPUs --------------------------------------------------------------------------------------------------------

_GPU_TOKEN = (r"(?<![\w.])(?:nvidia\s+|amd\s+)?(?:rtx\s*(?:pro\s*)?)?(?:geforce\s+)?"
              r"(?:[a-z]{1,2}\d{1,4}[a-z]{0,3}|a\d{4}|\d{4}(?:\s*ti)?|mi\d{3}x?|gaudi\s*\d)"
              r"(?:[\s-]*(?:sxm\d?|pcie|nvl|ada))?(?:[\s-]*(?:(?:da|with|con|dengan|of)\s+)?\d{2,3}\s*gb?(?:\s*vram)?|-\d{2}(?![\w.]))?"
              r"s?(?![\w])")
_MEMORY_CONNECTOR = r"\s(?:da|with|con|dengan|of)(?=\s+\d)"
"""Words between a GPU name and its memory size ("A100 da 80GB"), dropped before the name lookup."""


def _unit_follows(scan: _Scan, pos: int) -> bool:
    """Whether a unit word (tokens, examples, epochs, durations, money) follows `pos`: the number is not a GPU."""
    lex = _lex()
    units = [*lex["token_units"], *lex["example_units"], *lex["epoch_units"], *lex["seq_keywords"],
             *(w for words in lex["durations"].values() for w in words),
             *(w for forms in lex["currencies"].values() for w in forms["after"])]
    return _after(scan, pos, units, gap=r"[\s-]*") is not None


def _gpu_mentions(scan: _Scan) -> list[tuple[re.Match[str], str]]:
    """Every GPU model named in the text, with its canonical name, in order."""
    mentions = []
    for match in _rx(_GPU_TOKEN).finditer(scan.text):
        raw = re.sub(_MEMORY_CONNECTOR, "", match.group(0))
        if re.fullmatch(r"\d{4}(?:\s*ti)?s?", raw) and not _before(scan, match.start(), ["rtx", "geforce", "gtx"], 8) \
                and _unit_follows(scan, match.end()):
            continue  # "4090 tokens" is a number; "una 4090" is a card
        raw = re.sub(r"(?<=\d-\d\d)$", "gb", raw)  # "A100-80" -> "a100-80gb"
        name = canonical_gpu_name(raw) or canonical_gpu_name(re.sub(r"(?<=\d)s$", "", raw))
        if name is None or scan.is_claimed(match.start(), match.end()):
            continue
        mentions.append((match, name))
    return mentions


def _chosen_mention(scan: _Scan, mentions: list[tuple[re.Match[str], str]]) -> tuple[re.Match[str], str]:
    """The GPU the user wants: the first named, unless a later one follows a change word ("now", "invece")."""
    first_end = mentions[0][0].end()
    for match, name in reversed(mentions[1:]):
        marker = _before(scan, match.start(), _lex()["change_markers"], window=40)
        if name != mentions[0][1] and marker and max(0, match.start() - 40) + marker.start() >= first_end:
            return match, name  # the change word sits between the first GPU and this one
    return mentions[0]


def _node_factor(scan: _Scan, start: int) -> tuple[int, int]:
    """GPUs per node times nodes: "2 nodi da 8 H100" -> (2, start of "2"); (1, start) when no node count precedes."""
    match = _rx(r"(?<![\w.,])(\d{1,4})\s*(?:x\s*)?" + _alt(_lex()["node_units"])
                + r"\s*(?:,|:|x|@|da|of|with|con|dengan|masing-masing|each|ciascuno|ciascuna|per)?\s*(?:with\s+|con\s+)?$"
                ).search(scan.text[max(0, start - 40):start])
    if match is None:
        return 1, start
    return int(match.group(1)), max(0, start - 40) + match.start()


def _gpus(scan: _Scan) -> None:
    """GPU models and counts ("4x H100", "su 8 H100", "8 kartu A100", "on A100s", "H100 x 8", "2 nodi da 8 H100")."""
    gpu_units = _lex()["gpu_units"]
    mentions = _gpu_mentions(scan)
    if not mentions:
        return
    match, name = _chosen_mention(scan, mentions)
    scan.set("gpu", name)
    for other, _ in mentions:
        scan.claim(other.start(), other.end())
    count = None
    for q in scan.free():
        gap = scan.text[q.end:match.start()]
        if q.end <= match.start() and re.fullmatch(r"\s*(?:x|\*)?\s*(?:sol[oa]|singol[oa]|single|only|just|hanya|cuma|saja)?\s*"
                                                    r"(?:" + _alt(gpu_units) + r"\s*)?(?:nvidia\s*)?", gap):
            count = q
    after = _rx(r"\s*(?:x|\*)\s*(\d{1,5})(?![\w.,])|\s*(?:s\s+)?(?:x|\*)?\s*(\d{1,5})\s*" + _alt(gpu_units)).match(
        scan.text, match.end())
    if count is not None and count.scale == 1:
        nodes, start = _node_factor(scan, count.start)
        trailing = _rx(r"\s*(?:x|\*|per|su|on|across|over|di|in)\s*(\d{1,4})\s*" + _alt(_lex()["node_units"]) + r"(?![\w])"
                       ).match(scan.text, match.end())
        if nodes == 1 and trailing:  # "8 H100 x 2 nodi"
            nodes = int(trailing.group(1))
            scan.claim(trailing.start(), trailing.end())
        scan.set("num_gpus", nodes * int(count.number))
        scan.claim(start, count.end)
    elif after is not None:
        scan.set("num_gpus", int(after.group(1) or after.group(2)))
        scan.claim(match.end(), after.end())


def _gpu_count(scan: _Scan) -> None:
    """Counts of GPUs without a model ("otto GPU", "dua GPU", "and with 4 GPUs?", "a single GPU")."""
    for q in scan.free():
        unit = _after(scan, q.end, [r"x\s*" + _alt(_lex()["gpu_units"]), _alt(_lex()["gpu_units"])], gap=r"[\s-]*(?:x\s*)?")
        if unit and q.scale == 1 and q.number >= 1 and float(q.number).is_integer():
            nodes, start = _node_factor(scan, q.start)
            scan.set("num_gpus", nodes * int(q.number))
            scan.claim(start, unit.end())
            return
    match = _rx(r"(?<![\w-])(?:gpus?|schede|kartu)\s*(?:x|:|=)\s*(\d{1,5})(?![\w.,])").search(scan.text)
    if match and not scan.is_claimed(match.start(1), match.end(1)):
        scan.set("num_gpus", int(match.group(1)))
        scan.claim(match.start(1), match.end(1))


# --- sizes and data ----------------------------------------------------------------------------------------------

def _is_seq_context(scan: _Scan, q: Quantity) -> bool:
    """Whether a 'N tokens' quantity is a sequence length ("sequenze da 2048 token", "2048 tokens per sequence")."""
    if _before(scan, q.start, _lex()["seq_keywords"], window=22):
        return True
    tail = _after(scan, q.end, [_alt(_lex()["token_units"]) + r"\s+(?:per|each|a|ogni|setiap|tiap)\s+"
                                + r"(?:sequence|sequenza|esempio|example|sample|campione|contoh|urutan|sekuens|row|riga)"])
    return tail is not None or bool(_after(scan, q.end, [r"(?:-?" + _alt(_lex()["token_units"]) + r"\s*)?"
                                                          + _alt(_lex()["seq_keywords"])]))


def _seq_value(q: Quantity) -> int:
    """Sequence length in tokens; '4k' is 4096."""
    if q.scale == 1000 and q.number in SEQ_K_POWERS:
        return int(q.number) * 1024
    return int(round(q.value))


def _sizes_and_data(scan: _Scan) -> None:
    """Model size, dataset tokens and examples, sequence length, epochs and batch size from unit words."""
    lex = _lex()
    for q in scan.free():
        if _is_seq_context(scan, q) and (q.value >= 16 and q.value <= 10_000_000):
            unit = _after(scan, q.end, [r"(?:-?" + _alt(lex["token_units"]) + r")?(?:\s*(?:di\s+|of\s+)?"
                                        + _alt(lex["seq_keywords"]) + ")?"])
            scan.set("seq_len", _seq_value(q))
            scan.claim(q.start, unit.end() if unit else q.end)
            continue
        token = _after(scan, q.end, lex["token_units"])
        if token:
            scan.set("dataset_tokens", int(round(q.value)))
            scan.claim(q.start, token.end())
            continue
        example = _after(scan, q.end, lex["example_units"]) or _after(
            scan, q.end, [r"[^\W\d_]{3,}\s+" + _alt(lex["example_units"])])  # "40k customer emails"
        if example and q.value >= 1:
            scan.set("dataset_examples", int(round(q.value)))
            scan.claim(q.start, example.end())
            continue
        epoch = _after(scan, q.end, lex["epoch_units"], gap=r"[\s-]*(?:x\s*)?")  # "3 epochs", "3x epoch"
        if epoch and 0 < q.value <= 10_000:
            scan.set("epochs", q.value)
            scan.claim(q.start, epoch.end())
            continue
        param = _after(scan, q.end, lex["model_size_units"])
        billions = q.scale >= 1e6 or (q.attached and scan.text[q.end - 1:q.end] in "bm")
        named_before = _rx(_alt(lex["model_size_units"]) + r"\s*(?:da|of|dengan|with|di|size|sized)?\s*$").search(
            scan.text[max(0, q.start - 24):q.start])  # "modello 760M", "model berukuran 1.3B"
        if billions and (param or named_before or q.scale == 1e9) and 0 < q.value / 1e9 <= 100_000:
            scan.set("params_b", q.value / 1e9)
            scan.claim(q.start, param.end() if param else q.end)
            continue
        if param and _rx(r"(?:" + _alt(lex["model_size_units"]) + r")\s*(?:da|of|dengan|with)?\s*$").search(
                scan.text[max(0, q.start - 20):q.start]) and q.scale == 1 and not q.attached:
            continue
    _keyword_numbers(scan)


def _keyword_numbers(scan: _Scan) -> None:
    """Settings written as 'keyword number' ("context 4k", "batch size 8", "epochs: 3", "seq_len=2048")."""
    lex = _lex()
    rules = [("seq_len", lex["seq_keywords"], 16, _seq_value),
             ("micro_batch_size", lex["batch_keywords"], 20, lambda q: int(q.value)),
             ("epochs", lex["epoch_units"], 12, lambda q: q.value)]
    for name, words, window, convert in rules:
        if name in scan.values:
            continue
        for q in scan.free():
            keyword = _before(scan, q.start, words, window=window)
            if keyword is None:
                continue
            between = scan.text[max(0, q.start - window):q.start][keyword.end():]
            if re.search(r"\d", between) or len(between.split()) > 3:
                continue
            value = convert(q)
            if value and value > 0 and (name != "micro_batch_size" or float(q.value).is_integer()):
                scan.set(name, value)
                scan.claim(q.start, q.end)
                break


# --- time --------------------------------------------------------------------------------------------------------

_HOURS = {"minutes": 1 / 60, "hours": 1, "days": 24, "weeks": 168, "months": 720}
_HALF_AFTER = re.compile(r"\s+(?:e|and(?:\s+a)?|dan)?\s*0\.5(?![\d\w])", re.IGNORECASE)
"""A half after a duration, once number words are digits: "2 giorni e 0.5" (e mezzo), "a day and a 0.5" (and a half)."""


def _deadline(scan: _Scan) -> None:
    """Deadlines ("entro due settimane", "dalam 3 hari", "within 12 hours", "48h", "by tomorrow")."""
    durations = _lex()["durations"]
    found: list[tuple[int, float]] = []
    for q in scan.free():
        for kind, words in durations.items():
            unit = _after(scan, q.end, words, gap=r"\s*-?\s*")
            if unit and q.value > 0:
                if _before(scan, q.start, [r"every", r"ogni", r"setiap", r"tiap", r"per"], window=8):
                    break
                half = _HALF_AFTER.match(scan.text, unit.end())
                found.append((q.start, (q.value + (0.5 if half else 0)) * _HOURS[kind]))
                scan.claim(q.start, half.end() if half else unit.end())
                break
    for kind, words in durations.items():
        pattern = _rx(r"(?<![\w'])(?:(?:a|an|un|uno|una)\s+|un'\s*)" + _alt(words) + r"(?![\w])")
        for match in pattern.finditer(scan.text):
            if not scan.is_claimed(match.start(), match.end()) and not _before(scan, match.start(), [r"per", r"/"], 4):
                half = _HALF_AFTER.match(scan.text, match.end())
                found.append((match.start(), (1.5 if half else 1) * _HOURS[kind]))
    if found:
        scan.set("deadline_hours", sorted(found)[0][1])
        return
    for key, hours, label in (("day_after_tomorrow", 48, "the day after tomorrow"), ("tomorrow", 24, "tomorrow"),
                              ("tonight", 12, "today/tonight")):
        if _word(_lex()[key]).search(scan.text):
            scan.set("deadline_hours", float(hours))
            scan.assumptions.append(f"'{label}' read as a deadline {hours} hours from now")
            return


# --- preferences -------------------------------------------------------------------------------------------------

def _negated(scan: _Scan, start: int, window: int = 28) -> bool:
    """Whether a negation word precedes `start` in the same clause."""
    left = scan.text[max(0, start - window):start]
    breaks = list(_rx(r"[.;!?,]|(?<![\w])" + _alt(_lex()["clause_breaks"]) + r"(?![\w])").finditer(left))
    if breaks:
        left = left[breaks[-1].end():]
    return _rx(r"(?<![\w'])" + _alt(_lex()["negation_words"]) + r"(?![\w'])").search(left) is not None


def _spot(scan: _Scan) -> None:
    """Spot/preemptible allowed or refused ("posso usare istanze spot", "tidak boleh pakai spot", "on-demand only")."""
    lex = _lex()
    if _word(lex["on_demand_only"]).search(scan.text):
        scan.set("interruptible_ok", False)
        return
    for match in _word(lex["spot_words"]).finditer(scan.text):
        negative = _negated(scan, match.start()) or _after(scan, match.end(), [
            r"(?:instances?|istanze|instans|vms?|gpus?|machines?|macchine)?\s*,?\s*" + _alt(lex["spot_negative_after"])],
            gap=r"\s*") is not None
        scan.set("interruptible_ok", not negative)
        return


def _flags(scan: _Scan) -> None:
    """Method, precision, optimizer and gradient checkpointing when named."""
    lex = _lex()
    mentions = []
    for method, patterns in lex["methods"].items():
        for match in _word(patterns).finditer(scan.text):
            left = scan.text[max(0, match.start() - 16):match.start()]
            if _rx(r"(?<![\w])" + _alt(lex["method_negators"]) + r"\s*(?:the\s+|il\s+|la\s+|un\s+)?$").search(left):
                continue
            mentions.append((match.start(), method))
    if mentions:
        scan.set("method", sorted(mentions)[0][1])
    for key in ("precision", "optimizer"):
        for value, patterns in lex[key].items():
            if _word(patterns).search(scan.text):
                scan.set(key, value)
                break
    match = _word(lex["gradient_checkpointing"]).search(scan.text)
    if match:
        scan.set("gradient_checkpointing", not _negated(scan, match.start(), window=20))


def _places(scan: _Scan) -> None:
    """Providers and regions when named."""
    lex = _lex()
    providers = [pid for pid, names in lex["providers"].items()
                 if any(not _negated(scan, m.start(), 12) for m in _word(names).finditer(scan.text))]
    if providers:
        scan.set("providers", providers)
    regions = [m.group(0) for m in _rx(
        r"(?<![\w-])(?:(?:us|eu|ap|ca|sa|me|af|il|mx)-(?:east|west|north|south|central|northeast|southeast|northwest|southwest)-\d"
        r"|(?:us|europe|asia|australia|northamerica|southamerica|me|africa)-(?:east|west|north|south|central|northeast|"
        r"southeast|northwest|southwest)\d+)(?![\w-])").finditer(scan.text)]
    prefix = _alt(lex["region_prefixes"])
    for region, words in lex["regions"].items():
        if _rx(r"(?<![\w-])" + prefix + r"\s+" + _alt(words) + r"(?![\w-])").search(scan.text) or \
                _rx(r"(?<![\w-])" + _alt(words) + r"\s+(?:region|regione|wilayah|only|soltanto|saja)(?![\w])").search(scan.text):
            regions.append(region)
    if regions:
        scan.set("regions", regions)


EXTRACTORS = (_budget, _model, _gpus, _gpu_count, _sizes_and_data, _deadline, _bare_budget, _spot, _flags, _places)


def parse_fields(text: str, lang: str = "en") -> tuple[dict[str, Any], list[str]]:
    """JobSpec fields (no language) the message states, and the assumptions made reading it."""
    prepared = prepare(text)
    scan = _Scan(text=prepared, lang=lang, quantities=find_quantities(prepared, lang))
    for extract in EXTRACTORS:
        extract(scan)
    return scan.values, scan.assumptions
