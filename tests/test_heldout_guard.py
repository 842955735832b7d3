"""Held-out eval sentences never appear in product data: a word list or template tuned on a held-out sentence would
make its score meaningless. Every held-out message (blind dialogues, blind4 parse requests, the advice set's held-out half) is looked for, as a
whole and by its longest clause, in every data file the product ships under agent/, prompts/, tools/data and kb/."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA_SUFFIXES = {".json", ".txt", ".md", ".py"}
MIN_CLAUSE = 25
"""Clauses shorter than this many characters ("would it fit on a 4090", "sequenze da 2048 token", both in the issue
text and the templates) are common phrases, not a copied sentence."""
MIN_WORDS = 4
"""Nor are clauses of fewer words: "gradient checkpointing on" is a setting's name, in the templates as in the sets."""


def _heldout_sentences() -> list[str]:
    """Every user message of the held-out splits."""
    sentences = []
    for path in (ROOT / "evals" / "dialogues_blind").glob("dialogues_*heldout.*.jsonl"):
        for line in path.read_text("utf-8").splitlines():
            if line.strip():
                sentences += [turn["say"] for turn in json.loads(line)["turns"]]
    for path in (ROOT / "evals" / "parse").glob("blind4_heldout_*.jsonl"):
        sentences += [json.loads(line)["text"] for line in path.read_text("utf-8").splitlines() if line.strip()]
    for path in (ROOT / "evals" / "advice").glob("requests_*heldout.jsonl"):
        sentences += [json.loads(line)["text"] for line in path.read_text("utf-8").splitlines() if line.strip()]
    return sentences


def _normalised(text: str) -> str:
    """Lower case, single spaces (so re-wrapped or re-cased copies are found)."""
    return re.sub(r"\s+", " ", text.lower()).strip()


def _product_text() -> str:
    """All shipped data and code of the product, normalised, in one string."""
    parts = []
    for folder in ("agent", "prompts", "tools/data", "tools/providers/data", "kb", "web/static"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in DATA_SUFFIXES | {".js"}:
                parts.append(_normalised(path.read_text("utf-8", errors="replace")))
    return "\n".join(parts)


def test_the_heldout_sets_exist_and_are_not_empty() -> None:
    assert len(_heldout_sentences()) >= 100


def test_no_heldout_sentence_or_long_clause_appears_in_product_data() -> None:
    text = _product_text()
    found = []
    for sentence in _heldout_sentences():
        clauses = [
            c
            for c in re.split(r"[,.;:?!]", _normalised(sentence))
            if len(c.strip()) >= MIN_CLAUSE and len(c.split()) >= MIN_WORDS
        ]
        found += [c.strip() for c in clauses if c.strip() in text]
    assert not found, found[:5]
