"""Score the offline parser on the request sets: every expected field, plus every field set that was not expected."""

from __future__ import annotations

import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from agent.parsing.parse import parse_message

LANGUAGES = ("it", "id", "en")
EXTRA_SETS = ("blind4_tune", "blind4_heldout")
"""Sets kept in their own files (<set>_<lang>.jsonl), scored as a split of that name when the file is present."""


def held_out(split: str) -> bool:
    """Whether a split is held out: its misses and per-field figures are never shown (it is never tuned on)."""
    return "heldout" in split and not split.endswith("_tuned")


@dataclass
class Tally:
    """Right/total counts for one group of fields."""

    right: int = 0
    total: int = 0

    def add(self, ok: bool) -> None:
        """Count one field."""
        self.right += ok
        self.total += 1

    @property
    def accuracy(self) -> float:
        """Share of fields right (1.0 for an empty group)."""
        return self.right / self.total if self.total else 1.0


@dataclass
class Report:
    """Accuracy by (language, split), by field, the misses, and parse latency."""

    by_group: dict[tuple[str, str], Tally] = field(default_factory=lambda: defaultdict(Tally))
    by_field: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    language_right: Tally = field(default_factory=Tally)
    misses: list[str] = field(default_factory=list)
    hidden_misses: int = 0
    """Misses on held-out splits: counted, never listed (nobody may tune on them)."""
    latencies_ms: list[float] = field(default_factory=list)


def _rows(name: str) -> list[dict[str, Any]]:
    """Rows of one JSON Lines file of this folder; [] when it is absent."""
    path = resources.files(__package__).joinpath(name)
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load_requests(lang: str) -> list[dict[str, Any]]:
    """Rows of one language's request sets: requests_<lang>.jsonl, then each extra set present (split = its name)."""
    rows = _rows(f"requests_{lang}.jsonl")
    for split in EXTRA_SETS:
        rows += [row | {"split": split} for row in _rows(f"{split}_{lang}.jsonl")]
    return rows


def same(got: Any, want: Any) -> bool:
    """Field equality: numbers within 0.1 %, budgets by amount and currency, lists as sets."""
    if isinstance(want, dict) and isinstance(got, dict):
        return got.get("currency") == want.get("currency") and same(got.get("amount"), want.get("amount"))
    if isinstance(want, list) and isinstance(got, list):
        return sorted(got) == sorted(want)
    if isinstance(want, (int, float)) and not isinstance(want, bool) and isinstance(got, (int, float)):
        return abs(got - want) <= 1e-3 * max(1.0, abs(want))
    return got == want


def evaluate(languages: tuple[str, ...] = LANGUAGES) -> Report:
    """Parse every request offline and score it."""
    report = Report()
    for lang in languages:
        for row in load_requests(lang):
            start = time.perf_counter()
            result = parse_message(row["text"], use_llm=False)
            report.latencies_ms.append((time.perf_counter() - start) * 1000)
            report.language_right.add(result.language.language == lang)
            got = result.spec.model_dump(mode="json")
            expected = row["expected"]
            for name in sorted(set(expected) | set(result.mentioned)):
                ok = same(got.get(name), expected.get(name))
                report.by_group[(lang, row["split"])].add(ok)
                if held_out(row["split"]):
                    report.hidden_misses += not ok
                    continue
                report.by_field[name].add(ok)
                if not ok:
                    report.misses.append(
                        f"[{lang}/{row['split']}] {name}: got {got.get(name)!r}, "
                        f"want {expected.get(name)!r} <- {row['text']}"
                    )
    return report


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))] if ordered else 0.0


def render(report: Report, show_misses: bool = True) -> str:
    """Plain-text report; held-out splits show only their scores (per-field figures and misses leave them out)."""
    lines = ["field accuracy (expected fields + unexpected fields set), offline parser", ""]
    lines.append(f"{'language':<10}{'split':<16}{'right':>7}{'total':>7}{'accuracy':>10}")
    for (lang, split), tally in sorted(report.by_group.items()):
        lines.append(f"{lang:<10}{split:<16}{tally.right:>7}{tally.total:>7}{tally.accuracy:>10.1%}")
    for split in sorted({s for _, s in report.by_group}):
        right = sum(t.right for (_, s), t in report.by_group.items() if s == split)
        total = sum(t.total for (_, s), t in report.by_group.items() if s == split)
        lines.append(f"{'all':<10}{split:<16}{right:>7}{total:>7}{(right / total if total else 1):>10.1%}")
    lines += ["", "per field (held-out splits left out):", f"{'field':<24}{'right':>7}{'total':>7}{'accuracy':>10}"]
    for name, tally in sorted(report.by_field.items()):
        lines.append(f"{name:<24}{tally.right:>7}{tally.total:>7}{tally.accuracy:>10.1%}")
    lines += [
        "",
        f"language detected right: {report.language_right.right}/{report.language_right.total}",
        f"parse latency per message: p50 {percentile(report.latencies_ms, 0.5):.2f} ms, "
        f"p95 {percentile(report.latencies_ms, 0.95):.2f} ms (first call includes loading word lists)",
    ]
    if show_misses and report.misses:
        lines += ["", "misses (held-out splits not listed):", *report.misses]
    if report.hidden_misses:
        lines += ["", f"held-out misses: {report.hidden_misses} (not listed)"]
    return "\n".join(lines)
