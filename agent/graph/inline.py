"""A turn's LangGraph bookkeeping in the calling thread: no thread pool per `invoke` (issue 27).

LangGraph's sync loop (langgraph.pregel._executor.BackgroundExecutor) opens a new thread pool for every run, and its
first task (with durability='exit', the turn's one checkpoint save) starts a new thread that the run then waits for
and joins: ~0.2 ms of CPU, and a scheduling wait of milliseconds on a busy machine. Inside `inline_bookkeeping()`
those tasks run at once in the calling thread instead, in the same order, their errors raised where LangGraph
raises them. Only for runs that never submit a blocking waiter: runs without LangGraph's custom or message stream
modes (such a run's waiter blocks until the nodes emit). The advisor streams its events through
agent.stream_events instead, so streamed turns run inline too."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from typing import Any

from langgraph.pregel import _executor

_INLINE: ContextVar[bool] = ContextVar("gpu_advisor_inline_bookkeeping", default=False)
_THREAD_POOL = _executor.get_executor_for_config
"""LangGraph's own executor factory (langchain_core's, a new ThreadPoolExecutor per run)."""


class InlineExecutor(concurrent.futures.Executor):
    """An executor that runs each task when it is submitted, in the caller's thread; a done future comes back."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        """Run `fn` now; its result or exception in a finished future."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        try:
            result = fn(*args, **kwargs)
        except BaseException as error:  # as a pool's worker does: the future carries it, the run raises it
            future.set_exception(error)
        else:
            future.set_result(result)
        return future


_RUN_HERE = InlineExecutor()


def executor_for_config(config: Any) -> AbstractContextManager[concurrent.futures.Executor]:
    """The executor of one LangGraph run: inline inside `inline_bookkeeping()`, else LangGraph's thread pool."""
    if _INLINE.get():
        return nullcontext(_RUN_HERE)
    return _THREAD_POOL(config)


def install() -> None:
    """Let LangGraph's background executor take its executor from `executor_for_config` (idempotent)."""
    _executor.get_executor_for_config = executor_for_config  # type: ignore[assignment]


def installed() -> bool:
    """Whether LangGraph's runs get their executor here (a LangGraph upgrade that moves the hook shows up here)."""
    return getattr(_executor, "get_executor_for_config", None) is executor_for_config


@contextmanager
def inline_bookkeeping() -> Iterator[None]:
    """LangGraph runs started in this context (thread) run their background tasks inline."""
    token = _INLINE.set(True)
    try:
        yield
    finally:
        _INLINE.reset(token)


install()
