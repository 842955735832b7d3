"""The user's hardware constraint: card size ("a single 24 GB GPU", "scheda da 24 GB"), a count written with 'only'
("una sola scheda"), and cleared wishes ("any GPU is fine", "qualsiasi scheda", "GPU apa saja")."""

from __future__ import annotations

from agent.parsing.rules.scan import Scan, alt, rx, vocabulary, words

CARD_GB_RANGE = (4.0, 1024.0)
"""Sizes outside this range are not a GPU's memory ("500 GB of text")."""


def read_card_memory(scan: Scan) -> None:
    """A card size next to a GPU or memory word: '24 GB GPU', 'GPU 24 GB', 'scheda da 24 GB', '24gb of vram'."""
    lex = vocabulary()
    units = alt([*lex["gpu_units"], *lex["vram_words"]])
    for q in scan.free():
        gb = rx(r"\s*gb?(?![\w])").match(scan.text, q.end)
        if gb is None or q.scale != 1 or not CARD_GB_RANGE[0] <= q.value <= CARD_GB_RANGE[1]:
            continue
        unit_after = rx(r"\s*(?:of\s+|di\s+|per\s+|each\s+|a\s+)?(?:" + units + r")(?![\w])").match(scan.text, gb.end())
        unit_before = rx(r"(?<![\w-])(?:" + units + r")(?:\s+" + alt(words("card_fillers")) + r"){0,3}\s*$").search(
            scan.text[max(0, q.start - 40) : q.start]
        )  # "scheda da 24 GB", "Kartu saya cuma 16GB"
        if unit_after is None and unit_before is None:
            continue
        scan.set("gpu_memory_gb", q.value)
        scan.claim(q.start, gb.end())
        _count_before(scan, q.start)
        return


def _count_before(scan: Scan, start: int) -> None:
    """'1 24 gb gpu', 'on 2 24gb cards': the count right before the card size."""
    for q in scan.free():
        if (
            q.end <= start
            and rx(r"\s*(?:x\s*)?(?:" + alt(vocabulary()["count_only_words"]) + r"\s+)?$").fullmatch(
                scan.text[q.end : start]
            )
            and q.scale == 1
            and float(q.number).is_integer()
            and 1 <= q.number <= 4096
        ):
            scan.set("num_gpus", int(q.number))
            scan.claim(q.start, q.end)


def read_count_with_only(scan: Scan) -> None:
    """'una sola scheda', 'just 1 GPU', 'hanya 1 GPU': a count with 'only' between number and GPU word."""
    lex = vocabulary()
    pattern = rx(
        r"(?<![\w.,])(\d{1,4})\s+(?:" + alt(lex["count_only_words"]) + r")\s+(?:" + alt(lex["gpu_units"]) + r")(?![\w])"
    )
    for match in pattern.finditer(scan.text):
        if not scan.is_claimed(match.start(1), match.end(1)) and int(match.group(1)) >= 1:
            scan.set("num_gpus", int(match.group(1)))
            scan.claim(match.start(1), match.end(1))
            return


def read_cleared_wishes(scan: Scan) -> None:
    """'any GPU is fine' clears the GPU (and card size) wish; 'any number of GPUs' clears the count."""
    lex = vocabulary()
    if "gpu" not in scan.values and rx(r"(?<![\w])" + alt(lex["any_gpu"]) + r"(?![\w])").search(scan.text):
        scan.values["gpu"] = None
        scan.values.setdefault("gpu_memory_gb", None)
    if "num_gpus" not in scan.values and rx(r"(?<![\w])" + alt(lex["any_gpu_count"]) + r"(?![\w])").search(scan.text):
        scan.values["num_gpus"] = None
