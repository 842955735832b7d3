"""The advisor as a service: one object that runs chat turns on the graph, keeps threads in SQLite, and streams.

The web API, the Slack bot and the CLI all use `Advisor.respond` (one JSON-ready dict per turn) or `Advisor.stream`
(progress events, answer deltas, then the final dict). Bad input raises ValueError with a readable message.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from agent.graph import build_graph
from agent.language import normalise_language
from contract.jobspec import JobSpec
from tools.catalog import default_db_path, ensure_db

log = logging.getLogger("gpu_advisor.service")

MAX_MESSAGE_CHARS = 8000
"""Longer messages are rejected; the surfaces truncate before calling."""
MAX_THREAD_ID_CHARS = 200
CHANGEABLE_FIELDS = frozenset(name for name in JobSpec.model_fields if name != "language")
OFFER_LIMIT = 10


def new_thread_id() -> str:
    """A fresh conversation id."""
    return uuid.uuid4().hex


def default_checkpoint_path() -> Path:
    """Thread checkpoints live next to the catalog database (GPU_ADVISOR_HOME or the user data dir)."""
    return default_db_path().parent / "threads.sqlite"


def _citation(item: dict[str, Any]) -> dict[str, Any]:
    """A citation as the API shows it."""
    return {key: item[key] for key in ("id", "article", "title", "language", "text")}


def turn_result(state: dict[str, Any], thread_id: str) -> dict[str, Any]:
    """The JSON document of one turn (what `recommend --json` prints)."""
    ranking = state.get("ranking") or {}
    return {
        "thread_id": thread_id,
        "language": state.get("language", "en"),
        "intent": state.get("intent"),
        "spec": state.get("spec"),
        "missing": state.get("missing") or [],
        "estimate": state.get("estimate") or state.get("single_gpu_estimate"),
        "single_gpu_estimate": state.get("single_gpu_estimate"),
        "topology": state.get("topology"),
        "offers": (ranking.get("offers") or [])[:OFFER_LIMIT],
        "alternatives": {"cheapest": ranking.get("cheapest_that_fits"), "fastest": ranking.get("fastest")},
        "excluded": ranking.get("excluded") or {},
        "answer": state.get("answer", ""),
        "citations": [_citation(c) for c in state.get("citations") or []],
        "assumptions": ranking.get("assumptions") or [],
        "fx": ranking.get("fx"),
        "catalog": ranking.get("catalog"),
        "notes": state.get("notes") or [],
        "parser": state.get("parser", "offline"),
    }


class Advisor:
    """Runs chat turns; thread-safe (turns of one thread are serialised)."""

    def __init__(self, *, checkpoint_path: str | Path | None = None, db_path: str | Path | None = None) -> None:
        self.db_path = ensure_db(db_path)
        path = Path(checkpoint_path) if checkpoint_path else default_checkpoint_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._connection = sqlite3.connect(str(path), check_same_thread=False)
        self._graph = build_graph(self.db_path).compile(checkpointer=SqliteSaver(self._connection))
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    def _lock(self, thread_id: str) -> threading.Lock:
        """The lock that serialises turns of one thread."""
        with self._locks_guard:
            return self._locks.setdefault(thread_id, threading.Lock())

    def _prepare(self, message: str, thread_id: str | None, language: str | None, prefer: str | None,
                 changes: dict[str, Any] | None) -> tuple[dict[str, Any], str]:
        """Validate one turn's input; returns the graph input and the thread id."""
        if not isinstance(message, str):
            raise ValueError("message must be text")
        if not message.strip() and not changes and not prefer:
            raise ValueError("the message is empty")
        if len(message) > MAX_MESSAGE_CHARS:
            raise ValueError(f"the message is too long ({len(message)} characters; at most {MAX_MESSAGE_CHARS})")
        if thread_id is not None and (not isinstance(thread_id, str) or not thread_id.strip()
                                      or len(thread_id) > MAX_THREAD_ID_CHARS):
            raise ValueError(f"thread_id must be a non-empty string of at most {MAX_THREAD_ID_CHARS} characters")
        if prefer not in (None, "cost", "speed"):
            raise ValueError("prefer must be 'cost' or 'speed'")
        explicit = normalise_language(language) if language else None
        if changes:
            unknown = set(changes) - CHANGEABLE_FIELDS
            if unknown:
                raise ValueError(f"unknown job field(s) to change: {', '.join(sorted(unknown))}")
            JobSpec.model_validate({"language": explicit or "en", **changes})
        graph_input = {"message": message, "explicit_language": explicit, "prefer": prefer,
                       "changes": dict(changes) if changes else None}
        return graph_input, thread_id or new_thread_id()

    def respond(self, message: str, *, thread_id: str | None = None, language: str | None = None,
                prefer: str | None = None, changes: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run one turn and return its JSON-ready result."""
        graph_input, thread = self._prepare(message, thread_id, language, prefer, changes)
        with self._lock(thread):
            state = self._graph.invoke(graph_input, {"configurable": {"thread_id": thread}})
        return turn_result(state, thread)

    def stream(self, message: str, *, thread_id: str | None = None, language: str | None = None,
               prefer: str | None = None, changes: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
        """Run one turn, yielding progress and delta events, then the final result (or an error event)."""
        try:
            graph_input, thread = self._prepare(message, thread_id, language, prefer, changes)
        except ValueError as error:
            yield {"type": "error", "code": "bad_request", "message": str(error), "error_id": new_thread_id()[:12]}
            return
        state: dict[str, Any] = {}
        try:
            with self._lock(thread):
                for mode, chunk in self._graph.stream(graph_input, {"configurable": {"thread_id": thread}},
                                                      stream_mode=["custom", "values"]):
                    if mode == "custom":
                        yield chunk
                    else:
                        state = chunk
        except Exception:  # noqa: BLE001 - a stream ends with an error event, never a broken connection
            error_id = new_thread_id()[:12]
            log.exception("turn failed (error id %s)", error_id)
            yield {"type": "error", "code": "internal_error", "message": "the advisor failed on this turn",
                   "error_id": error_id}
            return
        yield {"type": "final", "result": turn_result(state, thread)}

    def close(self) -> None:
        """Close the checkpoint database."""
        self._connection.close()
