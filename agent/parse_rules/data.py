"""Model size, dataset tokens and examples, sequence length, epochs and batch size."""

from __future__ import annotations

import re

from agent.numbers import Quantity
from agent.parse_rules.scan import Scan, after, alt, before, rx, vocabulary

SEQ_K_POWERS = {1, 2, 4, 8, 16, 32, 64, 128, 256}
"""'4k context' means 4096 tokens: a k-size that is a power of two counts in units of 1024."""


# --- sizes and data ----------------------------------------------------------------------------------------------

def _is_seq_context(scan: Scan, q: Quantity) -> bool:
    """Whether a 'N tokens' quantity is a sequence length ("sequenze da 2048 token", "2048 tokens per sequence")."""
    if before(scan, q.start, vocabulary()["seq_keywords"], window=22):
        return True
    tail = after(scan, q.end, [alt(vocabulary()["token_units"]) + r"\s+(?:per|each|a|ogni|setiap|tiap)\s+"
                                + r"(?:sequence|sequenza|esempio|example|sample|campione|contoh|urutan|sekuens|row|riga)"])
    return tail is not None or bool(after(scan, q.end, [r"(?:-?" + alt(vocabulary()["token_units"]) + r"\s*)?"
                                                          + alt(vocabulary()["seq_keywords"])]))


def _seq_value(q: Quantity) -> int:
    """Sequence length in tokens; '4k' is 4096."""
    if q.scale == 1000 and q.number in SEQ_K_POWERS:
        return int(q.number) * 1024
    return int(round(q.value))


def read_sizes_and_data(scan: Scan) -> None:
    """Model size, dataset tokens and examples, sequence length, epochs and batch size from unit words."""
    lex = vocabulary()
    for q in scan.free():
        if _is_seq_context(scan, q) and (q.value >= 16 and q.value <= 10_000_000):
            unit = after(scan, q.end, [r"(?:-?" + alt(lex["token_units"]) + r")?(?:\s*(?:di\s+|of\s+)?"
                                        + alt(lex["seq_keywords"]) + ")?"])
            scan.set("seq_len", _seq_value(q))
            scan.claim(q.start, unit.end() if unit else q.end)
            continue
        token = after(scan, q.end, lex["token_units"])
        if token:
            scan.set("dataset_tokens", int(round(q.value)))
            scan.claim(q.start, token.end())
            continue
        example = after(scan, q.end, lex["example_units"]) or after(
            scan, q.end, [r"[^\W\d_]{3,}\s+" + alt(lex["example_units"])])  # "40k customer emails"
        if example and q.value >= 1:
            scan.set("dataset_examples", int(round(q.value)))
            scan.claim(q.start, example.end())
            continue
        epoch = after(scan, q.end, lex["epoch_units"], gap=r"[\s-]*(?:x\s*)?")  # "3 epochs", "3x epoch"
        if epoch and 0 < q.value <= 10_000:
            scan.set("epochs", q.value)
            scan.claim(q.start, epoch.end())
            continue
        param = after(scan, q.end, lex["model_size_units"])
        billions = q.scale >= 1e6 or (q.attached and scan.text[q.end - 1:q.end] in "bm")
        named_before = rx(alt(lex["model_size_units"]) + r"\s*(?:da|of|dengan|with|di|size|sized)?\s*$").search(
            scan.text[max(0, q.start - 24):q.start])  # "modello 760M", "model berukuran 1.3B"
        if billions and (param or named_before or q.scale == 1e9) and 0 < q.value / 1e9 <= 100_000:
            scan.set("params_b", q.value / 1e9)
            scan.claim(q.start, param.end() if param else q.end)
            continue
        if param and rx(r"(?:" + alt(lex["model_size_units"]) + r")\s*(?:da|of|dengan|with)?\s*$").search(
                scan.text[max(0, q.start - 20):q.start]) and q.scale == 1 and not q.attached:
            continue
    _keyword_numbers(scan)


def _keyword_numbers(scan: Scan) -> None:
    """Settings written as 'keyword number' ("context 4k", "batch size 8", "epochs: 3", "seq_len=2048")."""
    lex = vocabulary()
    rules = [("seq_len", lex["seq_keywords"], 16, _seq_value),
             ("micro_batch_size", lex["batch_keywords"], 20, lambda q: int(q.value)),
             ("epochs", lex["epoch_units"], 12, lambda q: q.value)]
    for name, words, window, convert in rules:
        if name in scan.values:
            continue
        for q in scan.free():
            keyword = before(scan, q.start, words, window=window)
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
