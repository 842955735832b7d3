"""The GPU models a message names, and the count it puts before each ("two 4090s or one A100 80GB?")."""

from __future__ import annotations

import re


def named_gpus(text: str) -> tuple[str, ...]:
    """Every GPU model the text names, canonical, in order, without repeats ("L40S o A100" -> L40S, A100)."""
    return tuple(dict.fromkeys(name for _start, name in _gpu_mentions(text.lower())))


def gpu_counts(text: str) -> dict[str, int]:
    """The count the text puts before each GPU it names ("two 4090s or one A100 80GB?" -> RTX4090: 2, A100-80GB: 1;
    number words read as digits), the first one for a GPU named twice; GPUs named without a count are left out."""
    from agent.language import words_to_digits

    lowered = words_to_digits(text).lower()
    counts: dict[str, int] = {}
    for start, name in _gpu_mentions(lowered):
        count = re.search(r"(?<![\w.,])(\d{1,3})\s*[x×]?\s*$", lowered[:start])
        if count and int(count.group(1)) > 0:
            counts.setdefault(name, int(count.group(1)))
    return counts


def _gpu_mentions(lowered: str) -> list[tuple[int, str]]:
    """(where, canonical name) of each GPU model a lower-cased text names, in order."""
    from tools.gpus import canonical_gpu_name, gpu_family_names

    found: list[tuple[int, str]] = []
    for match in re.finditer(r"(?:rtx\s*)?[a-z]{0,3}\d{1,4}[a-z]{0,3}(?:[\s-]?\d{2,3}\s?gb)?", lowered):
        token = match.group().strip()
        if not canonical_gpu_name(token):
            token = re.sub(r"(?<=\d)s$", "", token)  # "A100s", "4090s": the plural of a card
        if re.fullmatch(r"\d+", token) and not re.fullmatch(r"[2-5]0[6-9]0", token):
            continue  # a bare number is a count or a length unless it is a GeForce model ("4090", "3090")
        name = canonical_gpu_name(token)
        if name and len(gpu_family_names(token)) > 1 and not re.search(r"\d{2,3}\s?gb$", token):
            name = re.sub(r"-\d+GB$", "", name)  # "A100" is either size (issue 10)
        if name:
            found.append((match.start(), name))
    return found
