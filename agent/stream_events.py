"""Events a streaming caller sees while a turn runs: which step runs now, and the verdict as soon as it is known."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from typing import Any

import prompts

LANGUAGES = ("it", "id", "en")


@cache
def progress_labels(language: str) -> dict[str, str]:
    """Localised progress labels (prompts/<lang>/progress.json)."""
    return json.loads(prompts.load_in(language, "progress.json"))


Emit = Callable[[dict[str, Any]], None]
_EMIT: ContextVar[Emit | None] = ContextVar("gpu_advisor_stream_emit", default=None)
"""Where the running turn's events go: set by the advisor for a streamed turn, None otherwise. A context variable,
not LangGraph's custom stream mode: a streamed turn then runs like any other (its bookkeeping in the calling thread,
agent/graph/inline.py), and LangGraph copies the context into any thread it runs a node in."""


@contextmanager
def streaming_to(write: Emit) -> Iterator[None]:
    """Send the events of the turn run inside this block to `write`."""
    token = _EMIT.set(write)
    try:
        yield
    finally:
        _EMIT.reset(token)


def emit(event: dict[str, Any]) -> None:
    """Send an event to the turn's streaming caller (no-op when nobody streams)."""
    write = _EMIT.get()
    if write is not None:
        write(event)


def _writer() -> Emit | None:
    """The turn's event sink, or None when nobody streams."""
    return _EMIT.get()


def progress(node: str, language: str, **values: Any) -> None:
    """Tell a streaming caller which step runs now (no-op when nobody streams)."""
    write = _writer()
    if write is not None:
        label = progress_labels(language if language in LANGUAGES else "en").get(node, node)
        write({"type": "progress", "node": node, "label": label.format(**values)})


def verdict_known(found: dict[str, Any] | None) -> None:
    """Send the turn's verdict (the one its final result carries) before the answer is phrased, so a client can show
    the recommendation while the text is still being written; nothing for a turn that recommends no rental."""
    write = _writer()
    if write is not None and found and found.get("gpu"):
        write({"type": "verdict", "verdict": found})
