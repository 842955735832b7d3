"""Run the synchronous advisor off the event loop: calls in a thread pool, producers whose items the loop reads
as they come."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from functools import partial
from typing import TypeVar

T = TypeVar("T")

_ITEM, _ERROR, _DONE = "item", "error", "done"


async def run_blocking(executor: ThreadPoolExecutor, function: Callable[..., T], *args: object, **kwargs: object) -> T:
    """Await `function(*args, **kwargs)` run in `executor`."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(executor, partial(function, *args, **kwargs))


async def batches_in_thread(
    executor: ThreadPoolExecutor,
    produce: Callable[[Callable[[T], None]], None],
    *,
    idle_s: float | None = None,
    hold_s: float = 0.0,
    urgent: Callable[[T], bool] | None = None,
) -> AsyncIterator[list[T]]:
    """Run `produce(emit)` in a pool thread and yield what it emits, as lists of the items ready together (one
    wake-up of the caller for several items), and an empty list after `idle_s` seconds without one.

    With `hold_s`, an item waits until `hold_s` has passed since the last list was handed over, or until an `urgent`
    item comes (handed over with those before it): a turn's many small events cost one wake-up and one write each
    `hold_s` instead of one each. The producer runs to its end whatever the consumer does (a client gone stops the
    reading, not the turn). Its exception is re-raised here, after the items emitted before it."""
    loop = asyncio.get_running_loop()
    lock = threading.Lock()
    pending: list[tuple[str, object]] = []
    handed = [time.monotonic()]
    """When the consumer last took what was pending (the producer's clock for `hold_s`)."""
    ready = asyncio.Event()

    def put(kind: str, value: object) -> None:
        """Keep one message for the event loop; wake it when the message is due (dropped when the loop is gone)."""
        with lock:
            pending.append((kind, value))
            due = (
                kind != _ITEM or time.monotonic() - handed[0] >= hold_s or (urgent is not None and urgent(value))  # type: ignore[arg-type]
            )
        if due:
            with suppress(RuntimeError):
                loop.call_soon_threadsafe(ready.set)

    def run() -> None:
        """The producer, then its end or its error."""
        try:
            produce(lambda item: put(_ITEM, item))
        except BaseException as error:
            put(_ERROR, error)
        else:
            put(_DONE, None)

    loop.run_in_executor(executor, run)
    quiet_since = loop.time()
    while True:
        wait = idle_s if not hold_s else hold_s if idle_s is None else min(hold_s, idle_s)
        try:
            async with asyncio.timeout(wait):
                await ready.wait()
        except TimeoutError:
            pass
        ready.clear()
        with lock:
            messages = pending[:]
            pending.clear()
            handed[0] = time.monotonic()
        if not messages:
            if idle_s is not None and loop.time() - quiet_since >= idle_s:
                quiet_since = loop.time()
                yield []
            continue
        quiet_since = loop.time()
        items = [value for kind, value in messages if kind == _ITEM]
        if items:
            yield items  # type: ignore[misc]
        kind, value = messages[-1]
        if kind == _ERROR:
            raise value  # type: ignore[misc]
        if kind == _DONE:
            return
