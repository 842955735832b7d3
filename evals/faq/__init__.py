"""FAQ retrieval evaluation: questions written by hand in Italian, Indonesian and English, each with the entry ids
that answer it (an empty list marks a question the KB cannot answer). Every split but one was tuned against and says
so in its name (`dev`, `holdout_tuned`, `blind_tuned`, `blind2_tuned`: aliases and synonyms were written after
reading them); `heldout.*.jsonl` was written on 2026-11-30 before its first run and is never tuned against (first-run
and later scores in RESULTS.md; a held-out set that tuning touches is renamed `_tuned`). `python -m evals.faq` prints
recall@1, recall@3, no-answer precision/recall, language-ID accuracy and query latency per language.
"""
