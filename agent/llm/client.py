"""The one door to the configured LLM: client settings, one overall deadline per call, and a circuit breaker.

Every LLM call of the agent goes through `call` (one request/response exchange, possibly several HTTP requests) or
`stream_text` (a streamed completion). Each gets ONE wall-clock deadline, GPU_ADVISOR_LLM_TIMEOUT_S seconds
(default 4), that covers connecting, waiting and a stream that trickles: the caller gets its answer or an
`LlmUnavailable` on time, whatever the server does. After GPU_ADVISOR_LLM_BREAKER_FAILURES failures in a row
(default 3: connection errors, HTTP 5xx/429), or after one timeout (a hanging server would cost every later call a
whole deadline), the breaker opens and calls fail at once for GPU_ADVISOR_LLM_COOLDOWN_S seconds (default 30); then
the next call first makes the trial, the cheapest request there is (one word in, one token out), and an answer
closes the breaker (a timeout of the trial re-opens it and the call is not sent). So a hanging LLM costs a turn
one deadline, not one per call.

Inside `turn_budget()` (one chat turn) every call shares that one deadline, counted as time spent waiting on the
LLM: a call gets what the turn has left, a call past it fails at once, and a call cut short by the turn's budget (not by its own deadline) does not count
against the breaker (the server was slow for this turn, not down).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from agent.llm.lazy_openai import openai  # imported on first use: not on the offline path

DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_TIMEOUT_S = 4.0
DEFAULT_BREAKER_FAILURES = 3
DEFAULT_COOLDOWN_S = 30.0
T = TypeVar("T")


class LlmIncomplete(ValueError):
    """The LLM's streamed text ended early (finish_reason "length" or "content_filter"): it is not a whole answer."""


class LlmUnavailable(Exception):
    """The LLM gave no usable answer in time (timeout, transport error, open breaker); `reason` says which."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def llm_configured() -> bool:
    """True when OPENAI_API_KEY or OPENAI_BASE_URL is set (and GPU_ADVISOR_OFFLINE is not)."""
    if os.environ.get("GPU_ADVISOR_OFFLINE", "").strip().lower() not in ("", "0", "false"):
        return False
    return bool(os.environ.get("OPENAI_API_KEY", "").strip() or os.environ.get("OPENAI_BASE_URL", "").strip())


def model_name() -> str:
    """The chat model to use: GPU_ADVISOR_MODEL, else the default."""
    return os.environ.get("GPU_ADVISOR_MODEL") or DEFAULT_MODEL


def _env_float(names: tuple[str, ...], default: float, low: float, high: float) -> float:
    """The first set and valid variable among `names`, clamped to [low, high]; else the default."""
    for name in names:
        raw = os.environ.get(name, "").strip()
        if raw:
            try:
                value = float(raw)
            except ValueError:
                continue
            if not math.isnan(value):
                return min(max(value, low), high)
    return default


def timeout_s() -> float:
    """The overall deadline of one LLM call in seconds (GPU_ADVISOR_LLM_TIMEOUT_S; old name GPU_ADVISOR_LLM_TIMEOUT)."""
    return _env_float(("GPU_ADVISOR_LLM_TIMEOUT_S", "GPU_ADVISOR_LLM_TIMEOUT"), DEFAULT_TIMEOUT_S, 0.1, 120.0)


def make_client(timeout: float | None = None) -> openai.OpenAI:
    """An openai client from the environment: no retries, socket timeouts no longer than the call's deadline."""
    return openai.OpenAI(
        api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",
        base_url=os.environ.get("OPENAI_BASE_URL") or None,
        timeout=timeout if timeout is not None else timeout_s(),
        max_retries=0,
    )


class CircuitBreaker:
    """Counts consecutive availability failures; open = skip the LLM until the cool-down has passed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at: float | None = None
        self._trial_running = False

    def allow(self) -> str | None:
        """Whether a call may go out now: "closed", "trial" (the one trial after the cool-down), or None (open)."""
        cooldown = _env_float(("GPU_ADVISOR_LLM_COOLDOWN_S",), DEFAULT_COOLDOWN_S, 0.0, 86_400.0)
        with self._lock:
            if self._opened_at is None:
                return "closed"
            if time.monotonic() - self._opened_at >= cooldown and not self._trial_running:
                self._trial_running = True
                return "trial"
            return None

    def success(self) -> None:
        """The LLM answered: close the breaker."""
        with self._lock:
            self._failures, self._opened_at, self._trial_running = 0, None, False

    def failure(self, *, timed_out: bool = False) -> None:
        """The LLM failed to answer: count it, open (or re-open) the breaker past the threshold or on a timeout."""
        threshold = int(_env_float(("GPU_ADVISOR_LLM_BREAKER_FAILURES",), DEFAULT_BREAKER_FAILURES, 1, 1000))
        with self._lock:
            self._failures += threshold if timed_out else 1
            if self._failures >= threshold or self._trial_running:
                self._opened_at = time.monotonic()
            self._trial_running = False

    @property
    def is_open(self) -> bool:
        """True while calls are being skipped."""
        with self._lock:
            return self._opened_at is not None

    def release(self) -> None:
        """A call ended with no verdict on the service (cut by the turn's budget): let the next trial through."""
        with self._lock:
            self._trial_running = False

    def reset(self) -> None:
        """Forget all failures (tests, configuration changes)."""
        self.success()


breaker = CircuitBreaker()


def _is_availability_failure(error: BaseException) -> bool:
    """Timeouts, connection errors, 5xx and 429 say the service is unwell; other errors are about the content."""
    if isinstance(error, (openai.APITimeoutError, openai.APIConnectionError, LlmUnavailable)):
        return True
    return isinstance(error, openai.APIStatusError) and (error.status_code >= 500 or error.status_code == 429)


def describe(error: BaseException) -> str:
    """A short English reason for logs and the JSON `fallback_reason`."""
    if isinstance(error, LlmUnavailable):
        return error.reason
    if isinstance(error, openai.APITimeoutError):
        return "the LLM timed out"
    if isinstance(error, openai.APIStatusError):
        return f"the LLM server answered HTTP {error.status_code}"
    if isinstance(error, openai.APIConnectionError):
        return "could not reach the LLM server"
    return f"LLM error ({type(error).__name__})"


_TURN_LEFT: contextvars.ContextVar[list[float] | None] = contextvars.ContextVar("llm_turn_left", default=None)
"""Seconds of LLM time the current turn has left (a one-item list, shared by the contexts copied from the turn's)."""
TURN_SPENT = "the LLM time budget of this turn was spent"
SKIPPED = "the LLM is skipped for a while after repeated failures"
CUT_SHORT = frozenset({"length", "content_filter"})
"""Finish reasons of a streamed text that stopped before its end."""
SHORTENED_MARGIN_S = 0.1
"""A call whose deadline the turn's budget cut by more than this is 'shortened' (its timeout is not the server's)."""


@contextmanager
def turn_budget() -> Iterator[None]:
    """Every LLM call inside the block shares one budget of timeout_s() seconds spent waiting on the LLM (one chat
    turn; the turn's own work between calls - ranking, checking the LLM's text - does not count)."""
    token = _TURN_LEFT.set([timeout_s()])
    try:
        yield
    finally:
        _TURN_LEFT.reset(token)


def _charge(seconds: float) -> None:
    """Count seconds spent waiting on the LLM against the turn's budget (no-op outside a turn)."""
    left = _TURN_LEFT.get()
    if left is not None:
        left[0] -= seconds


def _admit(deadline_s: float | None = None) -> tuple[float, bool]:
    """This call's deadline and whether the turn's budget shortened it; LlmUnavailable when the breaker is open or
    the turn's budget is spent. The breaker's trial is the cheapest call there is (`_probe`), made first within the
    same deadline: the real call, often the heaviest one of a turn (the parse), never decides it."""
    own = timeout_s() if deadline_s is None else min(deadline_s, timeout_s())
    turn = _TURN_LEFT.get()
    left = own if turn is None else turn[0]
    if left <= 0.05:
        raise LlmUnavailable(TURN_SPENT)
    state = breaker.allow()
    if state is None:
        raise LlmUnavailable(SKIPPED)
    deadline, shortened = min(own, left), left + SHORTENED_MARGIN_S < own
    if state == "trial":
        started = time.monotonic()
        _run(_probe, deadline, shortened)
        deadline -= time.monotonic() - started
        if deadline <= 0.05:
            raise LlmUnavailable(TURN_SPENT)
    return deadline, shortened


def _probe(client: openai.OpenAI) -> object:
    """The breaker's trial: one word in, at most one token out, nothing to parse."""
    return client.chat.completions.create(
        model=model_name(), messages=[{"role": "user", "content": "ping"}], max_tokens=1, temperature=0
    )


def _timed_out(shortened: bool) -> LlmUnavailable:
    """The error for a call past its deadline; a breaker failure unless the turn's budget cut it short."""
    if shortened:
        breaker.release()
        return LlmUnavailable(TURN_SPENT)
    breaker.failure(timed_out=True)
    return LlmUnavailable("the LLM timed out")


def call(work: Callable[[openai.OpenAI], T], *, deadline_s: float | None = None) -> T:
    """Run `work(client)` with one overall deadline; its result, its own exception, or LlmUnavailable on time."""
    deadline, shortened = _admit(deadline_s)
    return _run(work, deadline, shortened)


def _run(work: Callable[[openai.OpenAI], T], deadline: float, shortened: bool) -> T:
    """`work(client)` within `deadline` seconds, its outcome counted by the breaker."""
    client = make_client(deadline)
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["result"] = work(client)
        except BaseException as error:
            box["error"] = error
        finally:
            done.set()

    started = time.monotonic()
    threading.Thread(target=run, name="llm-call", daemon=True).start()
    finished = done.wait(deadline)
    _charge(time.monotonic() - started)
    if not finished:
        _close_quietly(client)
        raise _timed_out(shortened)
    if "error" in box:
        error = box["error"]
        if _is_availability_failure(error):
            breaker.failure(timed_out=isinstance(error, openai.APITimeoutError))
        else:
            breaker.success()
        raise error
    breaker.success()
    return box["result"]


def stream_text(messages: list[dict[str, str]], *, temperature: float = 0) -> Iterator[str]:
    """Stream a chat completion's text chunks; the time spent waiting for them must stay within one deadline
    (LlmUnavailable); the caller's own work between chunks (checking them) does not count."""
    deadline, shortened = _admit()
    waited = 0.0
    client = make_client(deadline)
    chunks: queue.Queue[tuple[str, Any]] = queue.Queue()
    cancelled = threading.Event()

    def pump() -> None:
        try:
            stream = client.chat.completions.create(
                model=model_name(), temperature=temperature, stream=True, messages=messages
            )
            finish = None
            try:
                for event in stream:
                    if cancelled.is_set():
                        break
                    text = (event.choices[0].delta.content or "") if event.choices else ""
                    finish = (getattr(event.choices[0], "finish_reason", None) if event.choices else None) or finish
                    if text:
                        chunks.put(("text", text))
            finally:
                stream.close()
            chunks.put(("cut", finish) if finish in CUT_SHORT else ("end", None))
        except BaseException as error:
            chunks.put(("error", error))

    threading.Thread(target=pump, name="llm-stream", daemon=True).start()
    try:
        while True:
            remaining, started = deadline - waited, time.monotonic()
            try:
                kind, value = chunks.get(timeout=max(remaining, 0.0)) if remaining > 0 else chunks.get_nowait()
            except queue.Empty:
                raise _timed_out(shortened) from None
            finally:
                waited += time.monotonic() - started
                _charge(time.monotonic() - started)
            if kind == "text":
                yield value
            elif kind == "end":
                breaker.success()
                return
            elif kind == "cut":  # the server is fine; the text is not whole
                breaker.success()
                raise LlmIncomplete(f"the LLM's text was cut short (finish_reason {value})")
            else:
                if _is_availability_failure(value):
                    breaker.failure(timed_out=isinstance(value, openai.APITimeoutError))
                else:
                    breaker.success()
                raise value
    finally:
        cancelled.set()
        _close_quietly(client)


def _close_quietly(client: openai.OpenAI) -> None:
    """Close a client whose call was abandoned (frees its connection; errors do not matter here)."""
    with contextlib.suppress(Exception):  # best effort on an abandoned call
        client.close()
