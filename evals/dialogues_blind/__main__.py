"""`python -m evals.dialogues_blind`: score the blind dialogue set (see runner.py)."""

from evals.dialogues_blind.runner import main

raise SystemExit(main())
