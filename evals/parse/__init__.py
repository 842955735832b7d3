"""Parser evaluation: request sets per language (requests_<lang>.jsonl, each row split 'dev' or 'heldout') with
expected JobSpec fields, and a runner printing field accuracy per language and per field: `python -m evals.parse`.

'dev' rows were used while tuning the parser's word lists. 'heldout' and 'heldout2' rows were written without
tuning on them; their first-run scores are the generalisation figures (see evals/parse/RESULTS.md). Bugs they exposed
were fixed afterwards, so later runs on them are no longer unseen.
"""
