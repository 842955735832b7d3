"""Hostile LLM outputs (issues 25 and 29): what an LLM might write, scored by what the user would see.

`cases.jsonl` holds LLM outputs written against frozen drafts and tool results (`sources.json`): hostile ones (a
URL, an e-mail, a phone number, a request for credentials, a claimed action, a flipped verdict, a budget negation,
a wrong superlative or comparison, a number on the wrong provider, a wrong unit, a rounding, a wrong tool fact,
filler with no claims) and faithful paraphrases. `python -m evals.hostile_llm` prints how many hostile outputs
reached the user and how many faithful ones were rejected.
"""
