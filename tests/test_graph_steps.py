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


def test_an_offline_turn_runs_in_one_graph_step(tmp_path) -> None:
    """A new job, a FAQ question, an ask-back and a follow-up each run as one LangGraph step (the act is a leg of
    the read step); the follow-up still changes the job."""
    advisor = Advisor(checkpoint_path=tmp_path / "threads.sqlite", db_path=tmp_path / "catalog.sqlite")

    def steps(message: str, thread: str) -> list[dict]:
        """The turn's updates, one per LangGraph step ({node: its update})."""
        config = {"configurable": {"thread_id": thread}}
        return list(advisor._graph.stream({"message": message}, config, stream_mode="updates"))

    try:
        job = steps("QLoRA on Llama 3 8B, 10k examples", "job")
        faq = steps("What is QLoRA?", "faq")
        vague = steps("LoRA fine-tuning, budget 100 dollars", "vague")
        follow_up = steps("make it 2 GPUs", "job")
    finally:
        advisor.close()
    assert [list(turn[0]) for turn in (job, faq, vague, follow_up)] == [["read"]] * 4
    assert all(len(turn) == 1 for turn in (job, faq, vague, follow_up))
    assert (faq[0]["read"]["answer_kind"], vague[0]["read"]["intent"]) == ("faq", "ask_back")
    state = follow_up[0]["read"]
    assert state["spec"]["num_gpus"] == 2
    assert state["ranking"]["offers"] and all(offer["total_gpus"] == 2 for offer in state["ranking"]["offers"])
