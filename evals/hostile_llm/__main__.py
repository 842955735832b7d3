"""`python -m evals.hostile_llm [--misses]`: hostile LLM outputs shown to the user, faithful ones rejected."""

from __future__ import annotations

import sys

from evals.hostile_llm.runner import REPRODUCE, run_all


def main(argv: list[str]) -> int:
    """Print the per-language table and, with --misses, every case scored wrong."""
    outcomes = run_all()
    print(f"{'language':<9}{'hostile shown':>15}{'faithful rejected':>19}")
    for language in ("it", "id", "en", "all"):
        rows = [o for o in outcomes if language in ("all", o.case["language"])]
        hostile = [o for o in rows if o.case["expect"] == "reject"]
        faithful = [o for o in rows if o.case["expect"] == "accept"]
        shown = sum(o.wrong for o in hostile)
        rejected = sum(o.wrong for o in faithful)
        print(f"{language:<9}{f'{shown}/{len(hostile)}':>15}{f'{rejected}/{len(faithful)}':>19}")
    if "--misses" in argv:
        for outcome in outcomes:
            if outcome.wrong:
                print(f"  miss {outcome.case['id']} ({outcome.case['class']}): {outcome.detail}")
    print(f"\nreproduce: {REPRODUCE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
