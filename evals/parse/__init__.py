"""Parser evaluation: request sets per language (requests_<lang>.jsonl, rows split 'dev', 'heldout_tuned',
'heldout2_tuned' or 'blind3_tuned'; blind4_tune_<lang>.jsonl and blind4_heldout_<lang>.jsonl as splits of those
names) with expected JobSpec fields, and a runner printing field accuracy per language and per field:
`python -m evals.parse`.

'dev' rows were used while tuning the parser's word lists. The '*_tuned' splits were held out once; their first-run
scores are the generalisation figures (see evals/parse/RESULTS.md), and tuning on them since makes later runs
training scores. 'blind4_heldout' is never tuned on: the runner shows only its score, never its misses.
"""
