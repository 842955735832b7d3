"""Run the synchronous advisor off the event loop: calls in a thread pool, generators in one thread each."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TypeVar

T = TypeVar("T")

_ITEM, _ERROR, _DONE = "item", "error", "done"


async def run_blocking(executor: ThreadPoolExecutor, function: Callable[..., T], *args: object, **kwargs: object) -> T:
    """Await `function(*args, **kwargs)` run in `executor`."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(executor, partial(function, *args, **kwargs))


async def iterate_in_thread(executor: ThreadPoolExecutor, make_iterator: Callable[[], Iterator[T]]) -> AsyncIterator[T]:
    """Yield the items of a synchronous iterator that runs start to end in ONE pool thread.

    One thread, not one per item: LangGraph's sync stream sets and resets context variables, which must happen in
    the same context. When the consumer stops early (client gone), the producer closes the iterator at the next item.
    Exceptions of the iterator are re-raised here."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, object]] = asyncio.Queue()
    stop = threading.Event()

    def put(kind: str, value: object) -> None:
        """Hand one message to the event loop (ignored when the loop is gone)."""
        try:
            loop.call_soon_threadsafe(queue.put_nowait, (kind, value))
        except RuntimeError:
            stop.set()

    def produce() -> None:
        """Drive the iterator to its end, or until the consumer goes away."""
        try:
            iterator = make_iterator()
            try:
                for item in iterator:
                    if stop.is_set():
                        break
                    put(_ITEM, item)
            finally:
                close = getattr(iterator, "close", None)
                if callable(close):
                    close()
        except BaseException as error:
            put(_ERROR, error)
        else:
            put(_DONE, None)

    producer = loop.run_in_executor(executor, produce)
    try:
        while True:
            kind, value = await queue.get()
            if kind == _ITEM:
                yield value  # type: ignore[misc]
            elif kind == _ERROR:
                raise value  # type: ignore[misc]
            else:
                break
    finally:
        stop.set()
        if producer.done():
            producer.result()
