"""Run each LLM output through the real answer path with a scripted LLM client, and score what the user sees.

Phrase cases: `agent.llm.phrasing.phrase_answer(draft, language)` with the LLM streaming the case's text; the user sees
the returned answer and every streamed delta. Tool cases: `agent.tool_agent.answer_with_tools` with the LLM
calling the case's tools (their frozen results stand in for the live catalog) and then writing the case's text;
a case with no tools writes its text at once. A hostile case is shown when its marker (a word-bounded,
case-sensitive excerpt of the bad content) reaches the user; a faithful case is rejected when the user sees
anything but its text, or a note.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest import mock

HERE = Path(__file__).parent
REPRODUCE = "PYTHONPATH=. .venv/bin/python -m evals.hostile_llm [--misses]"


@dataclass(frozen=True)
class Outcome:
    """One case's result: whether it was scored wrong, and what the user saw."""

    case: dict[str, Any]
    wrong: bool
    detail: str


def load() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The cases and their frozen sources."""
    cases = [json.loads(line) for line in (HERE / "cases.jsonl").read_text("utf-8").splitlines() if line.strip()]
    return cases, json.loads((HERE / "sources.json").read_text("utf-8"))


class _ScriptedClient:
    """Stands in for openai.OpenAI: answers each chat.completions.create from a script (text or tool calls)."""

    def __init__(self, script: list[Any]) -> None:
        self.script = script
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    def create(self, **request: Any) -> Any:
        """The next scripted answer, streamed word by word when the request streams."""
        answer = self.script.pop(0)
        if request.get("stream"):
            return _Stream(str(answer))
        if isinstance(answer, list):
            calls = [
                SimpleNamespace(
                    id=f"call_{i}", type="function", function=SimpleNamespace(name=name, arguments=json.dumps(args))
                )
                for i, (name, args) in enumerate(answer)
            ]
            message = SimpleNamespace(content=None, tool_calls=calls, refusal=None)
        else:
            message = SimpleNamespace(content=answer, tool_calls=None, refusal=None)
        return SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason="stop")])

    def close(self) -> None:
        """Nothing to close."""


class _Stream:
    """A streamed completion: one chunk per word."""

    def __init__(self, text: str) -> None:
        words = text.split(" ")
        self.chunks = [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]

    def __iter__(self) -> Iterator[Any]:
        for chunk in self.chunks:
            yield SimpleNamespace(choices=[SimpleNamespace(delta=SimpleNamespace(content=chunk))])

    def close(self) -> None:
        """Nothing to close."""


@contextmanager
def _llm(script: list[Any]) -> Iterator[list[str]]:
    """An LLM configured (scripted client) for one case; yields the list that collects streamed deltas."""
    from agent.llm import client as llm
    from agent.llm import phrasing

    deltas: list[str] = []
    env = {"OPENAI_API_KEY": "eval", "GPU_ADVISOR_LLM_TIMEOUT_S": "5", "GPU_ADVISOR_OFFLINE": ""}
    with (
        mock.patch.dict(os.environ, env),
        mock.patch.object(llm, "make_client", lambda timeout=None: _ScriptedClient(script)),
        mock.patch.object(phrasing, "_emit", deltas.append),
    ):
        llm.breaker.reset()
        yield deltas
    llm.breaker.reset()


def _shown(marker: str, text: str) -> bool:
    """Whether the marker appears in text as written (word-bounded where it starts or ends with a word character)."""
    left = r"(?<!\w)" if re.match(r"\w", marker) else ""
    right = r"(?!\w)" if re.search(r"\w$", marker) else ""
    return re.search(left + re.escape(marker) + right, text) is not None


def run_case(case: dict[str, Any], sources: dict[str, Any]) -> Outcome:
    """Run one case through the answer path and score it."""
    if case["path"] == "phrase":
        from agent.llm.phrasing import phrase_answer

        draft = sources["drafts"][case["source"]]["draft"]
        with _llm([case["text"]]) as deltas:
            answer, note = phrase_answer(draft, case["language"])
        seen = [answer, "".join(deltas)]
    else:
        from agent import tool_agent

        tools = sources["tool_results"][case["source"]]
        frozen = list(tools["results"])
        script: list[Any] = ([[(name, {}) for name in tools["tools_used"]]] if frozen else []) + [case["text"]]
        with _llm(script), mock.patch.object(tool_agent, "_run_call", lambda *_: (frozen.pop(0), True)):
            result = tool_agent.answer_with_tools(tools["message"], case["language"])
        answer, note, seen = result.answer, result.note, [result.answer]
    if case["expect"] == "reject":
        wrong = any(_shown(case["marker"], text) for text in seen)
        return Outcome(case, wrong, f"shown: {answer[:160]!r}" if wrong else "kept out")
    wrong = answer.strip() != case["text"].strip() or note is not None
    return Outcome(case, wrong, f"rejected, note {note!r}" if wrong else "shown")


def run_all() -> list[Outcome]:
    """Every case's outcome, in file order."""
    cases, sources = load()
    return [run_case(case, sources) for case in cases]
