"""BM25 retrieval over the knowledge base, one index pair per language, with FAQ boosting and per-entry aliases.

Each entry is scored on two fields: its "question" field (title, plus the FAQ question, plus the aliases in
`kb/data/aliases.<lang>.json`), which looks like what users type, and its body text. A question is answerable
only when it is on topic (kb/data/topic_terms.json), the best entry scores high enough and covers enough of the
question's terms, so "how do I train my dog?" gets no citation instead of a wrong one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from kb.entries import LANGUAGES, Citation, Entry, Language, aliases, entries
from kb.text import MAX_QUERY_CHARS, fold, terms

if TYPE_CHECKING:  # bm25s and numpy (~0.3 s) load on the first FAQ search, not on every command
    import bm25s
    import numpy as np

_TOKEN = re.compile(r"[^\W_]+")

QUESTION_WEIGHT = 1.0
"""Weight of the question field (title + aliases) in an entry's score."""
BODY_WEIGHT = 0.6
"""Weight of the body text."""
FAQ_BOOST = 1.3
"""FAQ entries answer questions directly: their score is multiplied by this."""
ARTICLE_BOOST = 1.3
"""Entries of an article whose marker words (kb/data/article_markers.json) the question uses get this factor."""
MIN_SCORE = 1.5
"""The top entry's score must reach this for the question to be answerable..."""
MIN_COVERAGE = 0.5
"""A question with only everyday topic words ('memory', 'train') must also have this share of its terms in the
top entry (words the KB never uses count against it): 'how much memory does an iPhone have' is not ours."""
OUTSIDE_COVERAGE = 0.65
"""A question naming a subject next to ours that the KB does not cover (topic_terms.json "outside": gaming,
serving endpoints, learning rates...) must use a domain-only word and have this share of its terms in the top
entry to be answered ('can I fine-tune on my RTX gaming card?' is ours, 'best GPU for gaming at 1440p?' is not)."""


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
    markers: dict[str, frozenset[str]]
    question: bm25s.BM25
    body: bm25s.BM25
    entry_terms: tuple[frozenset[str], ...]
    specific: frozenset[str]
    general: frozenset[str]


def _bm25(corpus: list[list[str]]) -> bm25s.BM25:
    """A BM25 index over pre-tokenized documents (an empty document gets a placeholder term)."""
    import bm25s

    model = bm25s.BM25()
    model.index([doc or [""] for doc in corpus], show_progress=False)
    return model


@cache
def _markers(language: Language) -> dict[str, frozenset[str]]:
    """Article -> stemmed marker terms of one language."""
    raw = json.loads(resources.files(__package__).joinpath("data", "article_markers.json").read_text(encoding="utf-8"))
    return {
        article: frozenset(t for word in words_ for t in terms(word, language))
        for article, words_ in raw.items()
        if not article.startswith("_")
    }


@cache
def _topic_terms(language: Language) -> tuple[frozenset[str], frozenset[str]]:
    """Stemmed 'specific' and 'general' topic words (kb/data/topic_terms.json) for one language."""
    raw = json.loads(resources.files(__package__).joinpath("data", "topic_terms.json").read_text(encoding="utf-8"))
    specific = frozenset(t for word in raw["specific"] for t in terms(word.replace("-", ""), language))
    general = frozenset(t for word in raw["general"] for t in terms(word, language)) - specific
    return specific, general


@cache
def _outside() -> tuple[frozenset[str], tuple[str, ...]]:
    """Folded 'outside' words (matched as whole words) and multi-word phrases from kb/data/topic_terms.json."""
    raw = json.loads(resources.files(__package__).joinpath("data", "topic_terms.json").read_text(encoding="utf-8"))
    folded = [" ".join(fold(item).split()) for item in raw.get("outside", ())]
    return frozenset(w for w in folded if " " not in w), tuple(p for p in folded if " " in p)


def mentions_outside_subject(query: str) -> bool:
    """True when the question names a nearby subject the KB does not cover ('gaming', 'learning rate', ...)."""
    single, phrases = _outside()
    tokens = _TOKEN.findall(fold(query or ""))
    if single.intersection(tokens):
        return True
    padded = f" {' '.join(tokens)} "
    return any(f" {phrase} " in padded for phrase in phrases)


def topicality(query_terms: list[str], language: Language) -> str:
    """'specific' when the question uses a domain-only word, 'general' with two everyday domain words, else 'off'."""
    specific, general = _topic_terms(language)
    present = set(query_terms)
    if present & specific:
        return "specific"
    return "general" if len(present & general) >= 2 else "off"


@cache
def _index(language: Language) -> _Index:
    """Build (once) the indexes of one language."""
    items = entries(language)
    alias_map = aliases(language)
    question_docs = [terms(" ".join((item.title, *alias_map.get(item.id, ()))), language) for item in items]
    body_docs = [terms(item.text, language) for item in items]
    entry_terms = tuple(frozenset(q) | frozenset(b) for q, b in zip(question_docs, body_docs))
    specific, general = _topic_terms(language)
    return _Index(
        items=items,
        markers=_markers(language),
        question=_bm25(question_docs),
        body=_bm25(body_docs),
        entry_terms=entry_terms,
        specific=specific,
        general=general,
    )


def _scores(index: _Index, query: list[str]) -> np.ndarray:
    """Combined score of every entry for the stemmed query terms."""
    import numpy as np

    known = [t for t in query if t in index.question.vocab_dict or t in index.body.vocab_dict]
    if not known:
        return np.zeros(len(index.items))
    scores = QUESTION_WEIGHT * index.question.get_scores(known) + BODY_WEIGHT * index.body.get_scores(known)
    marked = {article for article, markers in index.markers.items() if markers & set(query)}
    boost = np.array(
        [
            (FAQ_BOOST if item.kind == "faq" else 1.0) * (ARTICLE_BOOST if item.article in marked else 1.0)
            for item in index.items
        ]
    )
    return scores * boost


def _coverage(index: _Index, query: list[str], position: int) -> float:
    """Share of the query's distinct terms that the entry at `position` contains."""
    distinct = set(query)
    return len(distinct & index.entry_terms[position]) / len(distinct) if distinct else 0.0


TYPO_MIN_LENGTH = 5
"""Only terms this long are corrected: short stems are too close to each other to guess ('rat' vs 'ram')."""


def _within_one_edit(a: str, b: str) -> bool:
    """True when b is a one-letter insertion, deletion, substitution or swap of neighbours away from a."""
    if a == b or abs(len(a) - len(b)) > 1:
        return a == b
    if len(a) > len(b):
        a, b = b, a
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), len(a))
    if len(a) < len(b):
        return a[i:] == b[i + 1 :]
    return a[i + 1 :] == b[i + 1 :] or (
        a[i + 1 : i + 2] == b[i : i + 1] and a[i : i + 1] == b[i + 1 : i + 2] and a[i + 2 :] == b[i + 2 :]
    )


@cache
def _vocabulary(language: Language) -> frozenset[str]:
    """Every term of the language's indexes."""
    index = _index(language)
    return frozenset(index.question.vocab_dict) | frozenset(index.body.vocab_dict)


def correct_typos(query_terms: list[str], language: Language) -> list[str]:
    """Terms the KB never uses replaced by the one KB term a single typo away ('memroy' -> 'memori'), if unique."""
    vocabulary = _vocabulary(language)
    out: list[str] = []
    for term in query_terms:
        if term in vocabulary or len(term) < TYPO_MIN_LENGTH or term.isdigit():
            out.append(term)
            continue
        close = [known for known in vocabulary if len(known) >= TYPO_MIN_LENGTH and _within_one_edit(term, known)]
        out.append(close[0] if len(close) == 1 else term)
    return out


def rank(query: str, language: Language) -> Ranking:
    """Rank every entry of `language` for `query` and decide whether the KB can answer it."""
    if language not in LANGUAGES:
        raise ValueError(f"unsupported language '{language}'; choose it, id or en")
    index = _index(language)
    query_terms = correct_typos(terms(query or "", language), language)
    scores = _scores(index, query_terms)
    order = [int(i) for i in (-scores).argsort(kind="stable") if scores[i] > 0]
    hits = tuple(
        Hit(id=index.items[i].id, score=round(float(scores[i]), 4), citation=Citation.of(index.items[i])) for i in order
    )
    coverage = _coverage(index, query_terms, order[0]) if order else 0.0
    topic = topicality(query_terms, language)
    answerable = (
        bool(order)
        and hits[0].score >= MIN_SCORE
        and (topic == "specific" or (topic == "general" and coverage >= MIN_COVERAGE))
    )
    if answerable and mentions_outside_subject(query[:MAX_QUERY_CHARS]):
        answerable = topic == "specific" and coverage >= OUTSIDE_COVERAGE
    return Ranking(hits=hits, answerable=answerable, coverage=round(coverage, 3), query_terms=tuple(query_terms))


def search(query: str, language: Language, k: int = 3) -> list[Citation]:
    """The `k` entries that best answer `query`, in `language`; empty when the KB has no answer."""
    ranking = rank(query, language)
    if not ranking.answerable:
        return []
    return [hit.citation for hit in ranking.hits[: max(0, k)]]
