"""What a number or name is said about: clauses about a past job ("last time it cost $900 on 4 A10G") and values
asked about ("is 8192 tokens too long?") are claimed first, so that no reader takes them for the job's fields."""

from __future__ import annotations

import itertools
import re

from agent.parsing.rules.scan import Scan, alt, rx, vocabulary, words

_SENTENCE_END = r"(?:[.!?;]+|\.\.\.|…)(?=\s|$)"


def _clauses(text: str) -> list[tuple[int, int]]:
    """Clause spans: sentences, cut again before a 'now' word ("stavolta", "sekarang", "this time") or a 'but'."""
    cuts = {0, len(text)}
    cuts |= {m.end() for m in re.finditer(_SENTENCE_END, text)}
    breaks = alt(words("now_markers") + list(vocabulary()["clause_breaks"]))
    cuts |= {m.start() for m in rx(r"(?<![\w'])" + breaks + r"(?![\w'])").finditer(text)}
    ordered = sorted(cuts)
    return [(a, b) for a, b in itertools.pairwise(ordered) if text[a:b].strip()]


def claim_past_clauses(scan: Scan) -> None:
    """Claim every clause about a past job: its prices, GPUs and providers describe what was, not what is wanted."""
    past = rx(r"(?<![\w'])" + alt(words("past_markers")) + r"(?![\w'])")
    for start, end in _clauses(scan.text):
        if past.search(scan.text, start, end):
            scan.claim(start, end)
            scan.assumptions.append(f"'{scan.text[start:end].strip()}' is about a past job: not read as this job")


_EXPERIENCE_SPAN_END = r"[,:;.!?…]|\s(?:and|e|ed|dan|but|ma|però|tapi)\s"
"""Where a remark about the user's experience ends: a mark, or a conjunction before the next clause."""


def claim_experience(scan: Scan) -> None:
    """Claim the GPU a first-time or never-before remark names ("è la prima volta che noleggio una GPU", "I've never
    rented a GPU", "belum pernah sewa GPU"): it describes the user, not the job's GPU count."""
    marker = rx(r"(?<![\w'])" + alt(words("experience_markers")) + r"(?![\w'])")
    count = rx(r"(?<![\w'])\S+\s+(?:\w+\s+)?(?:gpus?|schede?|cards?|kartu)(?![\w'])")
    for found in marker.finditer(scan.text):
        end = re.search(_EXPERIENCE_SPAN_END, scan.text[found.end() :])
        span_end = found.end() + (end.start() if end else len(scan.text) - found.end())
        for gpu in count.finditer(scan.text, found.end(), span_end):
            scan.claim(gpu.start(), gpu.end())


def claim_questioned_values(scan: Scan) -> None:
    """Claim a number a question asks about ("is 8192 tokens too long?", "sono troppi?"): it is asked, not stated."""
    excess = rx(r"(?<![\w'])" + alt(words("excess_words")) + r"(?![\w'])")
    for start, end in _clauses(scan.text):
        clause = scan.text[start:end]
        found = excess.search(clause)
        if found is None or "?" not in clause:
            continue
        for q in scan.free():
            if start <= q.start < start + found.start() and not re.search(r"\d", clause[q.end - start : found.start()]):
                tail = re.match(r"[\s-]*[^\W\d_]+(?:\s+(?:di|of)\s+[^\W\d_]+)?", scan.text[q.end :])
                scan.claim(q.start, q.end + (tail.end() if tail else 0))
                scan.assumptions.append(f"{scan.text[q.start : q.end]} is asked about, not stated")
                return
