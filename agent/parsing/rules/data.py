"""Model size, dataset tokens and examples, sequence length, epochs and batch size."""

from __future__ import annotations

import re
from functools import cache

from agent.language import Quantity
from agent.parsing.rules.scan import Scan, after, alt, before, cue_before, rx, unit_follows, vocabulary, words

SEQ_K_POWERS = {1, 2, 4, 8, 16, 32, 64, 128, 256}
"""'4k context' means 4096 tokens: a k-size that is a power of two counts in units of 1024."""
MAX_ITEM_TOKENS = 1_000_000
"""A longer 'length' after an example count is the data set's total, not one example's length."""


# --- sizes and data ----------------------------------------------------------------------------------------------


def _is_seq_context(scan: Scan, q: Quantity) -> bool:
    """Whether a 'N tokens' quantity is a sequence length ("sequenze da 2048 token", "2048 tokens per sequence"): a
    sequence word before it counts only with no other number in between ("seq 2048, mbs 4, 40k examples": 40k is no
    length)."""
    keyword = before(scan, q.start, vocabulary()["seq_keywords"], window=22)
    if (keyword and not re.search(r"\d", scan.text[max(0, q.start - 22) : q.start][keyword.end() :])) or rx(
        alt(vocabulary()["seq_keywords"]) + r"(?:\s+" + alt(words("seq_fillers")) + r"){1,3}\s*$"
    ).search(scan.text[max(0, q.start - 48) : q.start]):  # "panjang sekuens kami sebenarnya 8192"
        return True
    tail = after(
        scan,
        q.end,
        [
            alt(vocabulary()["token_units"])
            + r"\s+(?:per|each|a|ogni|setiap|tiap)\s+"
            + r"(?:sequence|sequenza|urutan|sekuens)"
        ],
    )
    return tail is not None or bool(
        after(
            scan,
            q.end,
            [
                r"(?:-?"
                + alt(vocabulary()["token_units"])
                + r"\s*(?:di\s+|of\s+)?)?"
                + alt(vocabulary()["seq_keywords"])
            ],
        )
    )


def _seq_value(q: Quantity) -> int:
    """Sequence length in tokens; '4k' is 4096."""
    if q.scale == 1000 and q.number in SEQ_K_POWERS:
        return int(q.number) * 1024
    return int(round(q.value))


def _example_unit(scan: Scan, q: Quantity) -> re.Match[str] | None:
    """The example words after a count, the longest first ("40k customer emails", "50,000 anonymised clinical notes",
    "8k Q&A pairs": up to two modifiers, which may themselves be example words), or None."""
    lex = vocabulary()
    return after(scan, q.end, [r"(?:[^\W\d_][\w&'-]{1,}\s+){1,2}" + alt(lex["example_units"])]) or after(
        scan, q.end, lex["example_units"]
    )


@cache
def _lead_marker() -> re.Pattern[str]:
    """A per-item marker right before a length ("masing-masing", "each", "ciascuno", "each example", with "about"
    words after it)."""
    return rx(
        r"(?<![\w])"
        + alt(words("per_item_markers"))
        + r"(?:\s+"
        + alt(vocabulary()["example_units"])
        + r")?\s*(?:da|di|of)?\s*(?:"
        + alt(words("approx_words"))
        + r"\s*)?$"
    )


NOT_ITEMS = ("node_units", "model_size_units", "token_units", "epoch_units", "gpu_units", "seq_keywords", "vram_words")
"""Unit words that never name what a count before a per-item length counts ("8 GPUs of 80 GB each")."""
LEAD_WINDOW = 24
"""Characters before a length where a per-item marker is looked for ("each example about 700 tokens")."""
MAX_ITEM_WORDS = 4
"""Words an item's name may take between its count and its length ("1500 contratti da", "800 laporan keuangan")."""


@cache
def _item_name_patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """What _named_items rejects: a connector or 'about' word (no name), a setting's keyword right before the count,
    another unit's word among the names."""
    return (
        rx(r"(?:" + alt([*words("per_item_connectors"), *words("approx_words")]) + r")$"),
        rx(r"(?<![\w])" + alt([*words("batch_keywords"), *words("seq_keywords")]) + r"\s*[:=]?\s*$"),
        rx(r"(?<![\w])" + alt([w for key in NOT_ITEMS for w in words(key)]) + r"(?![\w])"),
    )


def _named_items(scan: Scan, q: Quantity, length: Quantity) -> bool:
    """Whether only a few words naming no other unit stand between a count and a length: what the count counts when
    the length is marked as one item's ("1500 contratti da 20000 token l'uno", "25k support tickets of 900 tokens
    each"), whatever the items are called."""
    between = scan.text[q.end : length.start]
    marker = _lead_marker().search(between)
    glue, setting, other = _item_name_patterns()
    names = [
        name
        for name in re.findall(r"[^\W\d_][\w'’-]*", between[: marker.start()] if marker else between)
        if not glue.match(name)  # "4 with 2048 tokens each": a preposition names nothing
    ]
    if (
        setting.search(scan.text[max(0, q.start - 32) : q.start])  # "micro-batch 4 with 2048 tokens each": a value
        or not names
        or len(names) > MAX_ITEM_WORDS
        or not re.fullmatch(r"[\s,:(\[\w'’-]*", between)  # an aside: "6,000 QA pairs (about 400 tokens each)"
        or re.search(r"\d", between)
    ):
        return False
    return other.search(between) is None


def _per_item(scan: Scan, q: Quantity) -> int | None:
    """End of "M tokens" when it is one example's length: joined by a connector ("da", "of ~", "masing-masing")
    or followed by "each" / "l'uno" / "per example", and not a total; None otherwise."""
    unit = after(scan, q.end, vocabulary()["token_units"])
    if (
        unit is None
        or q.value > MAX_ITEM_TOKENS
        or rx(r"\s*" + alt(words("total_markers")) + r"(?![\w])").match(scan.text, unit.end())
    ):
        return None
    marker = rx(r"\s*,?\s*" + alt(words("per_item_markers")) + r"(?![\w])").match(scan.text, unit.end())
    return marker.end() if marker else (unit.end() if unit else None)


def _per_item_lengths(scan: Scan) -> None:
    """ "N esempi da M token", "N examples of ~M tokens each", "N contoh masing-masing M token": N examples and
    N x M tokens; "M tokens per example" with no count is claimed and noted (a length, not the data set's size)."""
    lead = rx(
        r"\s*[,(\[]?\s*(?:(" + alt(words("per_item_connectors")) + r")\s*)?(?:" + alt(words("approx_words")) + r"\s*)?$"
    )
    for q in scan.free():
        if q.value < 1:
            continue
        example = _example_unit(scan, q)
        length = next((t for t in scan.free() if t.start >= (example.end() if example else q.end)), None)
        end = _per_item(scan, length) if length is not None else None
        if length is None or end is None:
            continue
        after_unit = end > after(scan, length.end, vocabulary()["token_units"]).end()  # "each", "l'uno"
        before_length = _lead_marker().search(scan.text[q.end : length.start])  # "masing-masing 9000 token"
        marked = after_unit or before_length is not None
        gap = lead.match(scan.text[example.end() : length.start]) if example else None
        if not (gap and (gap.group(1) or marked)) and not (marked and _named_items(scan, q, length)):
            continue
        scan.set("dataset_examples", int(round(q.value)))
        scan.set("dataset_tokens", int(round(q.value * length.value)))
        scan.claim(q.start, end)
        scan.assumptions.append(
            f"{q.value:g} examples x {length.value:g} tokens each = {q.value * length.value:g} tokens"
        )
    for t in scan.free():
        end = _per_item(scan, t)
        if end is not None and (
            end > after(scan, t.end, vocabulary()["token_units"]).end()
            or _lead_marker().search(scan.text[max(0, t.start - LEAD_WINDOW) : t.start])  # "(in media 300 token)"
        ):
            scan.claim(t.start, end)
            scan.assumptions.append(f"{t.value:g} tokens is one example's length; the data set's size is not stated")
            scan.example_tokens = int(round(t.value))  # a thread's example count may size the data


def read_sizes_and_data(scan: Scan) -> None:
    """Model size, dataset tokens and examples, sequence length, epochs and batch size from unit words."""
    lex = vocabulary()
    _per_item_lengths(scan)
    for q in scan.free():
        counted = _example_unit(scan, q) is not None  # "32k context, 1,000 documents": a count, never a length
        if not counted and _is_seq_context(scan, q) and (q.value >= 16 and q.value <= 10_000_000):
            unit = after(
                scan,
                q.end,
                [r"(?:-?" + alt(lex["token_units"]) + r")?(?:\s*(?:di\s+|of\s+)?" + alt(lex["seq_keywords"]) + ")?"],
            )
            scan.set("seq_len", _seq_value(q))
            scan.claim(q.start, unit.end() if unit else q.end)
            continue
        if _is_seq_context(scan, q) and q.value > 10_000_000:  # a sequence length, if an impossible one: said so,
            scan.claim(q.start, q.end)  # never read as the data set's size
            scan.refuse("seq_len", scan.written(q), "out_of_range")
            continue
        token = after(scan, q.end, lex["token_units"])
        if token:
            scan.set("dataset_tokens", int(round(q.value)))
            scan.claim(q.start, token.end())
            continue
        example = _example_unit(scan, q)
        if example and q.value >= 1 and float(q.value).is_integer():  # "1,5 esempi" is no count of examples
            scan.set("dataset_examples", int(round(q.value)))
            scan.claim(q.start, example.end())
            continue
        qualifier = r"(?:" + alt(lex["count_qualifiers"]) + r"\s+)?"  # "una sola epoca", "two full epochs"
        epoch = after(scan, q.end, lex["epoch_units"], gap=r"[\s-]*(?:x\s*)?" + qualifier)  # "3 epochs", "3x epoch"
        if epoch:
            if 0 < q.value <= 10_000:
                scan.set("epochs", q.value)
            else:  # "10^30 epochs": said, never ignored
                scan.refuse("epochs", scan.written(q), "out_of_range")
            scan.claim(q.start, epoch.end())
            continue
        param = after(scan, q.end, lex["model_size_units"])
        billions = q.scale >= 1e6 or (q.attached and scan.text[q.end - 1 : q.end] in "bm")
        named_before = rx(alt(lex["model_size_units"]) + r"\s*(?:da|of|dengan|with|di|size|sized)?\s*$").search(
            scan.text[max(0, q.start - 24) : q.start]
        )  # "modello 760M", "model berukuran 1.3B"
        if billions and (param or named_before or q.scale == 1e9) and q.value > 0:
            if q.value / 1e9 <= 100_000:
                scan.set("params_b", q.value / 1e9)
            else:  # "a 1e30B model"
                scan.refuse("params_b", f"{q.value / 1e9:.6g}", "out_of_range")
            scan.claim(q.start, param.end() if param else q.end)
            continue
        if (
            param
            and rx(r"(?:" + alt(lex["model_size_units"]) + r")\s*(?:da|of|dengan|with)?\s*$").search(
                scan.text[max(0, q.start - 20) : q.start]
            )
            and q.scale == 1
            and not q.attached
        ):
            continue
    _keyword_numbers(scan)


KEYWORD_WINDOW = 32
"""Characters before a number where a setting's keyword may end ("epoch-nya jadi 2", "le epoche diventano 3"); the
words between are at most three (four for the items an example count counts), none a number."""
ITEM_WORD_CHARS = 10
"""Characters the window grows by for each word allowed beyond three."""


def _keyword_numbers(scan: Scan) -> None:
    """Settings written as 'keyword number' ("context 4k", "batch size 8", "epochs: 3", "seq_len=2048")."""
    lex = vocabulary()
    rules = [  # the keyword ends within the window, at most three words before the number ("epoch-nya jadi 2")
        ("seq_len", lex["seq_keywords"], _seq_value, 3),
        ("micro_batch_size", lex["batch_keywords"], lambda q: int(q.value), 3),
        ("epochs", lex["epoch_units"], lambda q: q.value, 3),
        # the items counted, then the count: "contoh percakapan sama pembeli ada sekitar 12 ribu", "the Q&A pairs
        # number about 3000", never a number with a unit of its own ("examples of 512 tokens")
        ("dataset_examples", lex["example_units"], lambda q: int(q.value), 4),
    ]
    byte_units = [w for forms in lex["byte_units"].values() for w in forms]  # "3 GB" is a size, not 3 items
    for name, cues, convert, most_words in rules:
        window = KEYWORD_WINDOW + ITEM_WORD_CHARS * (most_words - 3)
        if name in scan.values:
            continue
        for q in scan.free():
            if cue_before(scan, q.start, cues, window=window, most_words=most_words) is None:
                continue
            if name == "dataset_examples" and (
                unit_follows(scan, q.end)
                or after(scan, q.end, byte_units) is not None
                or not float(q.value).is_integer()
            ):  # "the manuals come to about 3 GB": a size, not 3 manuals
                continue
            value = convert(q)
            if value and value > 0 and (name != "micro_batch_size" or float(q.value).is_integer()):
                scan.set(name, value)
                scan.claim(q.start, q.end)
                break
