"""The product's trilingual FAQ knowledge base: the two source articles (GPU training; LLM fine-tuning) cut into
aligned entries in Italian, Indonesian and English (`kb/data/*.md`, the same entry id in every language), per-entry
aliases for recall, and BM25 retrieval per language (`kb.retrieval.search`, `kb.retrieval.entry`). Entry ids the
writer cites for recurring topics are in `kb.topics.TOPIC_ENTRY`.
"""

from kb.entries import Citation, Entry, entries, entry
from kb.retrieval import Hit, search
from kb.topics import TOPIC_ENTRY, topic_entry

__all__ = ["TOPIC_ENTRY", "Citation", "Entry", "Hit", "entries", "entry", "search", "topic_entry"]
