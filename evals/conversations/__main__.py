"""`python -m evals.conversations [--quiet] [--json]`: run the scripted dialogues and print the behaviour score."""

from evals.conversations.runner import main

raise SystemExit(main())
