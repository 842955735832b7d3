"""Run the advice eval: python -m evals.advice [--set requests|x24] [--quiet] [--json]."""

from evals.advice.runner import main

raise SystemExit(main())
