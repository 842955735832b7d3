"""A ranking asked again (a follow-up re-ranking the plan, a recurring job) comes from memory and equals a fresh one;
callers never share what they change, a changed catalog file ranks afresh, errors are never kept
(agent/graph/rankings.py, issue 27)."""

from __future__ import annotations

import copy
import os

import pytest

from agent.graph import rankings
from agent.graph.questions import comparison, ranked
from agent.parsing.parse import parse_message
from agent.writing import public
from tools.catalog import ensure_db
from tools.ranking import rank_offers

JOB = "QLoRA su Llama 3 70B, budget 300 euro, vanno bene le spot?"


@pytest.fixture
def db(tmp_path):
    """A private catalog, nothing remembered."""
    rankings.forget()
    yield ensure_db(tmp_path / "catalog.sqlite")
    rankings.forget()


def _fresh(spec, db, prefer=None):
    """The ranking computed with nothing remembered."""
    rankings.forget()
    return ranked(spec, db, prefer)


@pytest.mark.parametrize("made_public", [False, True])
@pytest.mark.parametrize("prefer", [None, "speed", "cost"])
def test_a_repeated_ranking_equals_a_fresh_one_and_callers_get_their_own_copy(db, prefer, made_public):
    spec = parse_message(JOB, use_llm=False).spec
    fresh = _fresh(spec, db, prefer)
    first, notes = ranked(spec, db, prefer, public=made_public)
    notes.append("changed by a caller")
    first["offers"][0]["provider"] = "changed by a caller"
    first["offers"].clear()
    first["assumptions"].append("changed by a caller")
    for _ in range(2):
        assert ranked(spec, db, prefer, public=made_public) == (public(fresh[0]) if made_public else fresh[0], fresh[1])
    if prefer is None:
        assert fresh[0] == rank_offers(spec, db_path=db).model_dump(mode="json")


def test_a_changed_catalog_file_ranks_afresh(db, monkeypatch):
    spec = parse_message(JOB, use_llm=False).spec
    calls = []
    real = rankings.remembered

    def counted(spec, db_path, compute, **options):
        return real(spec, db_path, lambda: calls.append(1) or compute(), **options)

    monkeypatch.setattr("agent.graph.questions.remembered", counted)
    ranked(spec, db, None)
    ranked(spec, db, "speed")
    assert len(calls) == 1
    stat = os.stat(db)
    os.utime(db, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    ranked(spec, db, None)
    assert len(calls) == 2


def test_a_failed_ranking_is_not_kept(db, monkeypatch):
    spec = parse_message(JOB, use_llm=False).spec
    monkeypatch.setattr("tools.ranking.rank_offers", _refuse)
    with pytest.raises(OverflowError):
        ranked(spec.model_copy(update={"interruptible_ok": False}), db, None)
    monkeypatch.undo()
    assert ranked(spec.model_copy(update={"interruptible_ok": False}), db, None)[0]["offers"]


def _refuse(*args, **kwargs):
    raise OverflowError("too long")


@pytest.mark.parametrize("prefer", [None, "speed"])
def test_a_repeated_gpu_count_comparison_equals_a_fresh_one(db, prefer):
    spec = parse_message(JOB, use_llm=False).spec
    rankings.forget()
    fresh = comparison(spec, 4, db, prefer)
    assert fresh["offer"] == _fresh(spec.model_copy(update={"num_gpus": 4}), db, prefer)[0]["offers"][0]
    snapshot = copy.deepcopy(fresh)
    fresh["offer"]["provider"] = "changed by a caller"
    assert comparison(spec, 4, db, prefer) == snapshot != fresh


@pytest.mark.parametrize("public_first", [False, True])
def test_the_same_job_asked_in_another_language_is_ranked_once(db, monkeypatch, public_first):
    """A ranking reads no language: a follow-up in another language re-ranks nothing, and gets what a fresh ranking
    of its own spec gives."""
    spec = parse_message(JOB, use_llm=False).spec
    other = spec.model_copy(update={"language": "id" if spec.language != "id" else "en"})
    fresh = _fresh(other, db)
    rankings.forget()
    calls = []
    real = rankings.remembered

    def counted(spec, db_path, compute, **options):
        return real(spec, db_path, lambda: calls.append(spec.language) or compute(), **options)

    monkeypatch.setattr("agent.graph.questions.remembered", counted)
    ranked(spec, db, None, public=public_first)
    assert ranked(other, db, None) == fresh
    assert calls == [spec.language]


def test_a_ranking_asked_after_its_gpu_count_was_compared_is_the_full_one(db):
    """A comparison keeps only what it answers with (the best offer at that count); the ranking of that count asked
    next (the user adopts the count) is the full ranking, equal to a fresh one."""
    spec = parse_message(JOB, use_llm=False).spec
    four = spec.model_copy(update={"num_gpus": 4})
    fresh = _fresh(four, db)
    rankings.forget()
    compared = comparison(spec, 4, db, None)
    assert compared["offer"] == fresh[0]["offers"][0]
    assert ranked(four, db, None) == fresh
    assert len(fresh[0]["offers"]) > 1
