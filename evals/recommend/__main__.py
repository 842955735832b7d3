"""Run the end-to-end agent evaluation: python -m evals.recommend [--quiet]."""

from evals.recommend.runner import main

raise SystemExit(main())
