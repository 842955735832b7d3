"""`python -m evals.parse [--quiet]`: print the offline parser's field accuracy per language, split and field."""

import sys

from evals.parse.runner import evaluate, render

print(render(evaluate(), show_misses="--quiet" not in sys.argv[1:]))
