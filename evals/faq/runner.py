"""Score KB retrieval on the hand-written question sets and format the figures."""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass
from importlib import resources

from agent.language.detect import detect_language
from kb.entries import LANGUAGES, Language
from kb.retrieval import rank

SPLITS: dict[str, str] = {
    "dev": "questions",
    "holdout_tuned": "holdout_tuned",
    "blind_tuned": "blind_tuned",
    "blind2_tuned": "blind2_tuned",
    "heldout": "heldout",
}
"""Split name -> file stem. A split whose questions the KB was tuned against carries `_tuned` in its name; only
`heldout` has never been tuned against (its first-run score is kept in evals/faq/RESULTS.md)."""
HELD_OUT = frozenset({"heldout"})
REPRODUCE = ".venv/bin/python -m evals.faq"


@dataclass(frozen=True, kw_only=True)
class Question:
    """One evaluation question and the entry ids that answer it (empty: the KB has no answer)."""

    question: str
    language: Language
    expected: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Scores:
    """Retrieval figures for one language and split."""

    language: str
    split: str
    answerable: int
    unanswerable: int
    recall_at_1: float
    recall_at_3: float
    no_answer_precision: float
    no_answer_recall: float
    language_id_accuracy: float
    median_ms: float
    p95_ms: float
    misses: tuple[str, ...]


def load_questions(language: Language, split: str = "dev") -> list[Question]:
    """The questions of one language and split."""
    name = f"{SPLITS[split]}.{language}.jsonl"
    text = resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    return [
        Question(question=row["question"], language=language, expected=tuple(row["expected"]))
        for row in map(json.loads, filter(str.strip, text.splitlines()))
    ]


def _ratio(part: int, whole: int) -> float:
    """part/whole rounded, 1.0 for an empty whole (nothing to get wrong)."""
    return round(part / whole, 3) if whole else 1.0


def score(language: Language, split: str = "dev") -> Scores:
    """Run every question of one language and split through retrieval and count hits."""
    questions = load_questions(language, split)
    at1 = at3 = refused = refused_right = unanswerable = detected = 0
    timings: list[float] = []
    misses: list[str] = []
    for item in questions:
        started = time.perf_counter()
        ranking = rank(item.question, language)
        timings.append((time.perf_counter() - started) * 1000)
        detected += detect_language(item.question).language == language
        top = [hit.id for hit in ranking.hits[:3]] if ranking.answerable else []
        if not item.expected:
            unanswerable += 1
        if not ranking.answerable:
            refused += 1
            refused_right += not item.expected
        if item.expected:
            at1 += bool(top) and top[0] in item.expected
            at3 += any(t in item.expected for t in top)
            if not top or top[0] not in item.expected:
                misses.append(f"{item.question!r} -> {top[:1] or 'no answer'} (want {item.expected[0]})")
        elif ranking.answerable:
            misses.append(f"{item.question!r} -> {top[0]} (want no answer)")
    answerable = len(questions) - unanswerable
    ordered = sorted(timings)
    return Scores(
        language=language,
        split=split,
        answerable=answerable,
        unanswerable=unanswerable,
        recall_at_1=_ratio(at1, answerable),
        recall_at_3=_ratio(at3, answerable),
        no_answer_precision=_ratio(refused_right, refused),
        no_answer_recall=_ratio(refused_right, unanswerable),
        language_id_accuracy=_ratio(detected, len(questions)),
        median_ms=round(statistics.median(ordered), 3),
        p95_ms=round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 3),
        misses=tuple(misses),
    )


def score_all(splits: tuple[str, ...] = tuple(SPLITS)) -> list[Scores]:
    """Scores for every language and split (indexes are built before timing starts)."""
    for language in LANGUAGES:
        rank("warm up", language)
    return [score(language, split) for split in splits for language in LANGUAGES]
