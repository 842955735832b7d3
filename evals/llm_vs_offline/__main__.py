"""`python -m evals.llm_vs_offline`: the blind dialogues offline and with a replayed small-model LLM (see runner.py)."""

from evals.llm_vs_offline.runner import main

raise SystemExit(main())
