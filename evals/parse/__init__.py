"""Parser evaluation: request sets per language (requests_<lang>.jsonl, each row split 'dev' or 'heldout') with
expected JobSpec fields, and a runner printing field accuracy per language and per field: `python -m evals.parse`.

'dev' rows were used while tuning the parser's word lists; 'heldout' rows were not, so they measure generalisation.
"""
