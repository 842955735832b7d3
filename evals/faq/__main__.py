"""`python -m evals.faq [--json] [--misses]`: print FAQ retrieval figures per language and split."""

from __future__ import annotations

import dataclasses
import json
import sys

from evals.faq.runner import REPRODUCE, score_all

COLUMNS = (
    "split",
    "language",
    "answerable",
    "unanswerable",
    "recall_at_1",
    "recall_at_3",
    "no_answer_precision",
    "no_answer_recall",
    "language_id_accuracy",
    "median_ms",
    "p95_ms",
)


def main(argv: list[str]) -> int:
    """Print the table (or JSON with --json); --misses also lists the questions answered wrongly."""
    results = score_all()
    if "--json" in argv:
        print(json.dumps([dataclasses.asdict(r) for r in results], indent=2, ensure_ascii=False))
        return 0
    print("  ".join(f"{c:>12}" if i > 1 else f"{c:<8}" for i, c in enumerate(COLUMNS)))
    for r in results:
        row = dataclasses.asdict(r)
        print("  ".join(f"{row[c]!s:>12}" if i > 1 else f"{row[c]!s:<8}" for i, c in enumerate(COLUMNS)))
        if "--misses" in argv:
            for miss in r.misses:
                print(f"    miss: {miss}")
    print(f"\nreproduce: {REPRODUCE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
