"""The advisor as a service: one object that runs chat turns on the graph, keeps threads, and streams.

The web API, the Slack bot and the CLI all use `Advisor.respond` (one JSON-ready dict per turn) or `Advisor.stream`
(progress events, answer deltas, then the final dict). Bad input raises ValueError with a readable message. Threads
live in SQLite (default) or PostgreSQL (agent/threads/); turns of one thread are serialised across processes, and
a turn runs to its end and is saved even when the caller stops listening.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agent import llm
from agent.detached import Detached
from agent.graph import build_graph, inline_bookkeeping
from agent.language import normalise_language
from agent.stream_events import streaming_to
from agent.threads import (
    BackgroundPruner,
    configured_retention_days,
    database_url_from,
    default_threads_path,
    open_thread_store,
)
from contract.jobspec import JobSpec, describe_validation_error
from tools.catalog import CatalogError, ensure_db, resolve_db_path

log = logging.getLogger("gpu_advisor.service")

MAX_MESSAGE_CHARS = 8000
"""Longer messages are rejected; the surfaces truncate before calling."""
MAX_THREAD_ID_CHARS = 200
CHANGEABLE_FIELDS = frozenset(name for name in JobSpec.model_fields if name != "language")
OFFER_LIMIT = 10
DURABILITY = "exit"
"""One checkpoint per turn, written when the turn ends (not one per graph step)."""
CLOSE_WAIT_S = 30.0
"""How long `close` waits for turns still running (a stream whose client left) before closing the store."""


def new_thread_id() -> str:
    """A fresh conversation id: 128 random bits, unguessable."""
    return secrets.token_hex(16)


def default_checkpoint_path() -> Path:
    """Thread checkpoints live next to the catalog database (GPU_ADVISOR_HOME or the user data dir)."""
    return default_threads_path()


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
        "act": state.get("act"),
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
        "notes": list(dict.fromkeys(state.get("notes") or [])),  # one LLM failure seen twice is said once
        "parser": state.get("parser", "offline"),
        "verdict": state.get("verdict"),
        "changed": state.get("changed") or [],
        "binding_limit": ranking.get("binding_limit"),
        "binding_params": ranking.get("binding_params"),
        "headline_reason": ranking.get("headline_reason"),
    }


def one_line(error: ValueError) -> str:
    """A refused input as one human line: each bad field for a validation error, else the message on one line."""
    if isinstance(error, ValidationError):
        return describe_validation_error(error)
    return " ".join(str(error).split()) or "invalid input"


def error_event(code: str, message: str) -> dict[str, Any]:
    """A streamed turn's error event, with a new id to quote in a report."""
    return {"type": "error", "code": code, "message": message, "error_id": new_thread_id()[:12]}


class Advisor:
    """Runs chat turns; thread-safe; turns of one thread are serialised across threads and processes."""

    def __init__(
        self,
        *,
        checkpoint_path: str | Path | None = None,
        db_path: str | Path | None = None,
        database_url: str | None = None,
        retention_days: float | None = None,
        on_turn: Callable[[], None] | None = None,
    ) -> None:
        """Threads in PostgreSQL when `database_url` (or $GPU_ADVISOR_DATABASE_URL) is set, else in the SQLite file
        `checkpoint_path`; idle threads are deleted after `retention_days` ($GPU_ADVISOR_THREAD_RETENTION_DAYS);
        `on_turn` runs after every turn (a long-running process's GC tuning, agent/gc_tuning.py)."""
        self.on_turn = on_turn
        try:
            self.db_path = ensure_db(db_path)
        except CatalogError as error:  # job turns then end in catalog_unavailable; FAQ turns still answer
            log.error("catalog unavailable: %s", error)
            self.db_path = resolve_db_path(db_path)[0]
        path = Path(checkpoint_path) if checkpoint_path else default_checkpoint_path()
        self.store = open_thread_store(path, database_url_from(database_url), fallback=checkpoint_path is None)
        self.retention_days = configured_retention_days() if retention_days is None else retention_days
        self._graph = build_graph(self.db_path).compile(checkpointer=self.store.saver)
        self._running = 0
        self._idle = threading.Condition()
        self._pruner = BackgroundPruner(self.store, self.retention_days, self._track)

    def _prepare(
        self,
        message: str,
        thread_id: str | None,
        language: str | None,
        prefer: str | None,
        changes: dict[str, Any] | None,
    ) -> tuple[dict[str, Any], str]:
        """Validate one turn's input; returns the graph input and the thread id."""
        if not isinstance(message, str):
            raise ValueError("message must be text")
        if not message.strip() and not changes and not prefer:
            raise ValueError("the message is empty")
        if len(message) > MAX_MESSAGE_CHARS:
            raise ValueError(f"the message is too long ({len(message)} characters; at most {MAX_MESSAGE_CHARS})")
        if thread_id is not None and (
            not isinstance(thread_id, str) or not thread_id.strip() or len(thread_id) > MAX_THREAD_ID_CHARS
        ):
            raise ValueError(f"thread_id must be a non-empty string of at most {MAX_THREAD_ID_CHARS} characters")
        if prefer not in (None, "cost", "speed"):
            raise ValueError("prefer must be 'cost' or 'speed'")
        explicit = normalise_language(language) if language else None
        if changes:
            unknown = set(changes) - CHANGEABLE_FIELDS
            if unknown:
                raise ValueError(f"unknown job field(s) to change: {', '.join(sorted(unknown))}")
            JobSpec.model_validate({"language": explicit or "en", **changes})
        graph_input = {
            "message": message,
            "explicit_language": explicit,
            "prefer": prefer,
            "changes": dict(changes) if changes else None,
        }
        return graph_input, thread_id or new_thread_id()

    def _track(self, delta: int) -> None:
        """Count turns in flight (close waits for them)."""
        with self._idle:
            self._running += delta
            self._idle.notify_all()

    def _final_state(self, graph_input: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
        """The state a turn ends with (what `invoke` returns, without its per-step 'updates' stream: the graph never
        interrupts), its checkpoint saved in this thread (agent/graph/inline.py)."""
        state: dict[str, Any] = {}
        with inline_bookkeeping():
            for chunk in self._graph.stream(graph_input, config, stream_mode="values", durability=DURABILITY):
                state = chunk
        return state

    def _run_turn(
        self, graph_input: dict[str, Any], thread: str, emit: Callable[[dict[str, Any]], None] | None
    ) -> dict[str, Any]:
        """One turn under the thread's lock; `emit` receives progress and delta events when streaming."""
        config = {"configurable": {"thread_id": thread}}
        with self.store.turn_lock(thread), llm.turn_budget():  # every LLM call of the turn shares one deadline
            with streaming_to(emit) if emit is not None else nullcontext():
                state = self._final_state(graph_input, config)
        self._pruner.maybe_run()
        if self.on_turn is not None:
            self.on_turn()
        return state

    def respond(
        self,
        message: str,
        *,
        thread_id: str | None = None,
        language: str | None = None,
        prefer: str | None = None,
        changes: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Run one turn and return its JSON-ready result."""
        graph_input, thread = self._prepare(message, thread_id, language, prefer, changes)
        self._track(+1)
        try:
            state = self._run_turn(graph_input, thread, None)
        finally:
            self._track(-1)
        return turn_result(state, thread)

    def rerun_current_job(self, thread_id: str) -> dict[str, Any] | None:
        """The thread's current job (spec and cost/speed preference) answered again on a new thread, the original
        thread untouched (threads keep only what the next turn needs, not the last answer); None without a job."""
        values = self._graph.get_state({"configurable": {"thread_id": thread_id}}).values or {}
        spec = values.get("spec") or {}
        fields = {name: value for name, value in spec.items() if name != "language" and value is not None}
        if not fields:
            return None
        return self.respond("", changes=fields, language=spec.get("language"), prefer=values.get("preference"))

    def stream(
        self,
        message: str,
        *,
        thread_id: str | None = None,
        language: str | None = None,
        prefer: str | None = None,
        changes: dict[str, Any] | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Run one turn, yielding progress and delta events, then the final result (or an error event).

        The turn runs in a thread of its own: a consumer that stops early (a client gone) does not abort it."""
        arguments = {"thread_id": thread_id, "language": language, "prefer": prefer, "changes": changes}
        name = f"turn-{(thread_id or 'new')[:8]}"
        yield from Detached(lambda emit: self.stream_to(emit, message, **arguments), name=name)

    def stream_to(
        self,
        emit: Callable[[dict[str, Any]], None],
        message: str,
        *,
        thread_id: str | None = None,
        language: str | None = None,
        prefer: str | None = None,
        changes: dict[str, Any] | None = None,
    ) -> None:
        """Run one turn in this thread, handing `emit` its progress and delta events, then the final result (or an
        error event); `emit` must not raise. For callers that relay events themselves (the SSE route): no thread of
        its own and no queue between the turn and the caller."""
        try:
            graph_input, thread = self._prepare(message, thread_id, language, prefer, changes)
        except ValueError as error:  # the same one line /api/chat answers with, never pydantic's raw text
            emit(error_event("bad_request", one_line(error)))
            return
        self._track(+1)
        try:
            state = self._run_turn(graph_input, thread, emit)
            final = {"type": "final", "result": turn_result(state, thread)}
        except CatalogError as error:  # the offers catalog cannot be read: say so, in one line
            final = error_event("catalog_unavailable", " ".join(str(error).split()))
        except ValueError as error:  # the tools refused the input (an unknown GPU or model): /api/chat's 422 line
            final = error_event("invalid_input", one_line(error))
        except Exception:
            final = error_event("internal_error", "the advisor failed on this turn")
            log.exception("turn failed (error id %s)", final["error_id"])
        finally:
            self._track(-1)
        emit(final)

    def close(self) -> None:
        """Wait (briefly) for turns still running, then close the thread store."""
        with self._idle:
            self._idle.wait_for(lambda: self._running == 0, timeout=CLOSE_WAIT_S)
        self.store.close()
