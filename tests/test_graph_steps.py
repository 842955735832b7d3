"""The graph runs a turn in few LangGraph steps (each costs bookkeeping whatever it does), and a step made of several
node functions behaves like those functions run one after another (agent/graph/build.py `in_order`)."""

from __future__ import annotations

import pytest

from agent.graph.build import in_order, then
from agent.service import Advisor


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """No LLM: the offline graph."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def test_in_order_steps_see_earlier_updates_and_merge_theirs() -> None:
    seen = []

    def first(state):
        return {"language": "it", "answer": "draft", "notes": ["a"]}

    def second(state):
        seen.append((state["language"], state["answer"], state["message"]))
        return {"answer": "final", "verdict": None}

    update = in_order(first, second)({"message": "ciao", "answer": "", "language": "en"})
    assert seen == [("it", "draft", "ciao")]
    assert update == {"language": "it", "answer": "final", "notes": ["a"], "verdict": None}


def test_a_leg_runs_in_the_same_step_when_the_route_names_it_and_its_own_route_decides() -> None:
    def read(state):
        return {"intent": state["message"], "answer": "read"}

    def merge(state):
        return {"answer": f"merged {state['intent']}", "missing": state["intent"] == "vague"}

    step = then(
        read,
        lambda s: "faq" if s["intent"] == "faq" else "merge",
        {"merge": (merge, lambda s: "ask_back" if s["missing"] else "advise")},
    )
    faq, vague, clear = (step({"message": m}) for m in ("faq", "vague", "clear"))
    assert (faq.goto, faq.update) == ("faq", {"intent": "faq", "answer": "read"})
    assert (vague.goto, vague.update) == ("ask_back", {"intent": "vague", "answer": "merged vague", "missing": True})
    assert (clear.goto, clear.update["answer"], clear.update["missing"]) == ("advise", "merged clear", False)


def test_a_new_job_runs_in_two_graph_steps_and_a_faq_too(tmp_path) -> None:
    advisor = Advisor(checkpoint_path=tmp_path / "threads.sqlite", db_path=tmp_path / "catalog.sqlite")
    try:
        graph = advisor._graph
        config = {"configurable": {"thread_id": "steps"}}
        job = [
            next(iter(chunk))
            for chunk in graph.stream({"message": "QLoRA on Llama 3 8B, 10k examples"}, config, stream_mode="updates")
        ]
        faq = [
            next(iter(chunk))
            for chunk in graph.stream(
                {"message": "What is QLoRA?"}, {"configurable": {"thread_id": "faq"}}, stream_mode="updates"
            )
        ]
        reply = advisor.respond("make it 2 GPUs", thread_id="steps")
    finally:
        advisor.close()
    assert job == ["read", "advise"]
    assert faq == ["read", "faq"]
    assert reply["offers"] and all(offer["total_gpus"] == 2 for offer in reply["offers"])
