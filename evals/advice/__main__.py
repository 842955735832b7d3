"""Run the advice eval: python -m evals.advice [--quiet] [--json]."""

from evals.advice.runner import main

raise SystemExit(main())
