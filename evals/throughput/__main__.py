"""`python -m evals.throughput`: per-row tool/published ratios, median and worst, tuned and held-out."""

from evals.throughput.runner import main

if __name__ == "__main__":
    raise SystemExit(main())
