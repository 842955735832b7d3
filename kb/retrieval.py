"""BM25 retrieval over the knowledge base, one index pair per language, with FAQ boosting and per-entry aliases.

Each entry is scored on two fields: its "question" field (title, plus the FAQ question, plus the aliases in
`kb/data/aliases.<lang>.json`), which looks like what users type, and its body text. A query is answerable only
when the best entry covers enough of the query's informative terms (words the KB never uses count fully against
it), so "how do I train my dog?" gets no citation instead of a wrong one.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources

import bm25s
import numpy as np

from kb.entries import LANGUAGES, Citation, Entry, Language, entries
from kb.text import terms

QUESTION_WEIGHT = 1.0
"""Weight of the question field (title + aliases) in an entry's score."""
BODY_WEIGHT = 0.6
"""Weight of the body text."""
FAQ_BOOST = 1.15
"""FAQ entries answer questions directly: their score is multiplied by this."""
MIN_COVERAGE = 0.5
"""Share of the query's informative weight (IDF) the top entry must contain for the query to be answerable."""
MIN_SCORE = 1.0
"""...and the top entry's score must reach this."""


@dataclass(frozen=True, kw_only=True)
class Hit:
    """A scored entry for one query."""

    id: str
    """Entry id."""
    score: float
    """Combined BM25 score (higher is better)."""
    citation: Citation
    """The entry, ready to cite."""


@dataclass(frozen=True, kw_only=True)
class Ranking:
    """Every entry ranked for one query, with the decision whether the KB answers it."""

    hits: tuple[Hit, ...]
    """All entries with a positive score, best first."""
    answerable: bool
    """False when the top entry does not cover the question well enough to be cited."""
    coverage: float
    """Share of the query's informative weight found in the top entry (0..1)."""
    query_terms: tuple[str, ...]
    """The stemmed terms the query was reduced to."""


@dataclass(frozen=True, kw_only=True)
class _Index:
    """The BM25 indexes and term statistics of one language."""

    items: tuple[Entry, ...]
    question: bm25s.BM25
    body: bm25s.BM25
    entry_terms: tuple[frozenset[str], ...]
    idf: dict[str, float]
    unknown_idf: float


@cache
def aliases(language: Language) -> dict[str, tuple[str, ...]]:
    """Entry id -> alias phrases (synonyms, colloquial wordings) in one language."""
    raw = resources.files(__package__).joinpath("data", f"aliases.{language}.json").read_text(encoding="utf-8")
    return {key: tuple(value) for key, value in json.loads(raw).items()}


def _bm25(corpus: list[list[str]]) -> bm25s.BM25:
    """A BM25 index over pre-tokenized documents (an empty document gets a placeholder term)."""
    model = bm25s.BM25()
    model.index([doc or [""] for doc in corpus], show_progress=False)
    return model


@cache
def _index(language: Language) -> _Index:
    """Build (once) the indexes of one language."""
    items = entries(language)
    alias_map = aliases(language)
    question_docs = [terms(" ".join((item.title, *alias_map.get(item.id, ()))), language) for item in items]
    body_docs = [terms(item.text, language) for item in items]
    entry_terms = tuple(frozenset(q) | frozenset(b) for q, b in zip(question_docs, body_docs))
    count = len(items)
    df: dict[str, int] = {}
    for bag in entry_terms:
        for term in bag:
            df[term] = df.get(term, 0) + 1
    idf = {term: math.log(1 + (count - n + 0.5) / (n + 0.5)) for term, n in df.items()}
    return _Index(items=items, question=_bm25(question_docs), body=_bm25(body_docs), entry_terms=entry_terms,
                  idf=idf, unknown_idf=math.log(1 + (count + 0.5) / 0.5))


def _scores(index: _Index, query: list[str]) -> np.ndarray:
    """Combined score of every entry for the stemmed query terms."""
    known = [t for t in query if t in index.idf]
    if not known:
        return np.zeros(len(index.items))
    scores = QUESTION_WEIGHT * index.question.get_scores(known) + BODY_WEIGHT * index.body.get_scores(known)
    boost = np.array([FAQ_BOOST if item.kind == "faq" else 1.0 for item in index.items])
    return scores * boost


def _coverage(index: _Index, query: list[str], position: int) -> float:
    """Share of the query's IDF mass that the entry at `position` contains."""
    weights = {t: index.idf.get(t, index.unknown_idf) for t in set(query)}
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    found = sum(w for t, w in weights.items() if t in index.entry_terms[position])
    return found / total


def rank(query: str, language: Language) -> Ranking:
    """Rank every entry of `language` for `query` and decide whether the KB can answer it."""
    if language not in LANGUAGES:
        raise ValueError(f"unsupported language '{language}'; choose it, id or en")
    index = _index(language)
    query_terms = terms(query or "", language)
    scores = _scores(index, query_terms)
    order = [int(i) for i in np.argsort(-scores, kind="stable") if scores[i] > 0]
    hits = tuple(Hit(id=index.items[i].id, score=round(float(scores[i]), 4), citation=Citation.of(index.items[i]))
                 for i in order)
    coverage = _coverage(index, query_terms, order[0]) if order else 0.0
    answerable = bool(order) and coverage >= MIN_COVERAGE and hits[0].score >= MIN_SCORE
    return Ranking(hits=hits, answerable=answerable, coverage=round(coverage, 3), query_terms=tuple(query_terms))


def search(query: str, language: Language, k: int = 3) -> list[Citation]:
    """The `k` entries that best answer `query`, in `language`; empty when the KB has no answer."""
    ranking = rank(query, language)
    if not ranking.answerable:
        return []
    return [hit.citation for hit in ranking.hits[: max(0, k)]]
