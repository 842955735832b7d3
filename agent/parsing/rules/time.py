"""Deadlines: durations, 'a day and a half', tomorrow/tonight."""

from __future__ import annotations

import re

from agent.parsing.rules.scan import Scan, after, alt, before, negative, rx, vocabulary, word
from agent.parsing.rules.scan import words as word_list

_HOURS = {"minutes": 1 / 60, "hours": 1, "days": 24, "weeks": 168, "months": 720}
_HALF_AFTER = re.compile(r"\s+(?:e|and(?:\s+a)?|dan)?\s*0\.5(?![\d\w])", re.IGNORECASE)
"""A half after a duration, once number words are digits: "2 giorni e 0.5" (e mezzo), "a day and a 0.5" (and a half)."""


def read_deadline(scan: Scan) -> None:
    """Deadlines ("entro due settimane", "dalam 3 hari", "within 12 hours", "48h", "by tomorrow")."""
    durations = vocabulary()["durations"]
    found: list[tuple[int, float]] = []
    for q in scan.free():
        for kind, words in durations.items():
            unit = after(scan, q.end, words, gap=r"\s*-?\s*")
            if unit and negative(scan, q):  # "deadline -5 hours": no deadline, said so (never read as +5 h)
                scan.claim(q.start, unit.end())
                scan.refuse("deadline_hours", f"-{scan.text[q.start : unit.end()]}", "negative")
                break
            if unit and q.value > 0:
                if before(scan, q.start, [r"every", r"ogni", r"setiap", r"tiap", r"per"], window=8):
                    break
                half = _HALF_AFTER.match(scan.text, unit.end())
                found.append((q.start, (q.value + (0.5 if half else 0)) * _HOURS[kind]))
                scan.claim(q.start, half.end() if half else unit.end())
                break
    for kind, words in durations.items():
        pattern = rx(r"(?<![\w'])(?:(?:a|an|un|uno|una)\s+|un'\s*)" + alt(words) + r"(?![\w])")
        for match in pattern.finditer(scan.text):
            if not scan.is_claimed(match.start(), match.end()) and not before(scan, match.start(), [r"per", r"/"], 4):
                half = _HALF_AFTER.match(scan.text, match.end())
                found.append((match.start(), (1.5 if half else 1) * _HOURS[kind]))
    if found:
        scan.set("deadline_hours", min(found)[1])
        return
    for key, hours, label in (
        ("day_after_tomorrow", 48, "the day after tomorrow"),
        ("tomorrow", 24, "tomorrow"),
        ("tonight", 12, "today/tonight"),
        ("today", 12, "today/tonight"),
    ):
        found = word(vocabulary()[key]).search(scan.text)
        if found and not _says_done_by(scan, found):
            continue  # "I started today", "lo lancio stasera" name no deadline; "entro oggi", "need it tomorrow" do
        if found:
            scan.set("deadline_hours", float(hours))
            scan.assumptions.append(f"'{label}' read as a deadline {hours} hours from now")
            return


def _says_done_by(scan: Scan, day: re.Match[str]) -> bool:
    """Whether a day word ("tomorrow", "stasera", "besok") is what the job must be done by: a deadline or need cue
    shortly before it, or after it in the same clause ("besok harus selesai")."""
    cues = word_list("deadline_cues")
    if before(scan, day.start(), cues, window=24):
        return True
    clause = re.split(r"[.;!?,]", scan.text[day.end() : day.end() + 32], maxsplit=1)[0]
    return word(cues).search(clause) is not None
