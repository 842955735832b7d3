"""Run the synchronous advisor off the event loop: calls in a thread pool, producers whose items the loop reads
as they come."""

from __future__ import annotations

import asyncio
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
    executor: ThreadPoolExecutor, produce: Callable[[Callable[[T], None]], None], *, idle_s: float | None = None
) -> AsyncIterator[list[T]]:
    """Run `produce(emit)` in a pool thread and yield what it emits, as lists of the items ready together (one
    wake-up of the caller for several items), and an empty list after `idle_s` seconds without one.

    The producer runs to its end whatever the consumer does (a client gone stops the reading, not the turn). Its
    exception is re-raised here, after the items emitted before it."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, object]] = asyncio.Queue()

    def put(kind: str, value: object) -> None:
        """Hand one message to the event loop (dropped when the loop is gone)."""
        with suppress(RuntimeError):
            loop.call_soon_threadsafe(queue.put_nowait, (kind, value))

    def run() -> None:
        """The producer, then its end or its error."""
        try:
            produce(lambda item: put(_ITEM, item))
        except BaseException as error:
            put(_ERROR, error)
        else:
            put(_DONE, None)

    loop.run_in_executor(executor, run)
    while True:
        try:
            async with asyncio.timeout(idle_s):
                messages = [await queue.get()]
        except TimeoutError:
            yield []
            continue
        while not queue.empty():
            messages.append(queue.get_nowait())
        items = [value for kind, value in messages if kind == _ITEM]
        if items:
            yield items  # type: ignore[misc]
        kind, value = messages[-1]
        if kind == _ERROR:
            raise value  # type: ignore[misc]
        if kind == _DONE:
            return
