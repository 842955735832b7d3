"""FAQ retrieval evaluation: questions written by hand in Italian, Indonesian and English, each with the entry ids
that answer it (an empty list marks a question the KB cannot answer), split into a dev set (`questions.*.jsonl`,
used while tuning) and a holdout set (`holdout.*.jsonl`, never tuned against). `python -m evals.faq` prints
recall@1, recall@3, no-answer precision/recall, language-ID accuracy and query latency per language.
"""
