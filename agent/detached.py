"""Run a producer in a thread of its own and hand its items to whoever iterates, so the work finishes (and is
saved) even when the consumer goes away: a browser that closes its event stream must not abort the turn."""

from __future__ import annotations

import contextvars
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")

_ITEM, _ERROR, _DONE = 0, 1, 2


class Detached(Generic[T]):
    """Started on creation; iterate to receive the items; exceptions of the producer are re-raised there."""

    def __init__(
        self,
        produce: Callable[[Callable[[T], None]], None],
        *,
        name: str = "turn",
        on_exit: Callable[[], None] | None = None,
    ) -> None:
        """Start `produce(emit)` in a new thread (in a copy of the caller's context variables); `on_exit` runs in that
        thread when it ends."""
        self._queue: queue.SimpleQueue[tuple[int, object]] = queue.SimpleQueue()
        self._produce, self._on_exit = produce, on_exit
        context = contextvars.copy_context()
        self.thread = threading.Thread(target=context.run, args=(self._run,), name=name, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        """Run the producer to its end whatever the consumer does."""
        try:
            self._produce(lambda item: self._queue.put((_ITEM, item)))
        except BaseException as error:
            self._queue.put((_ERROR, error))
        else:
            self._queue.put((_DONE, None))
        finally:
            if self._on_exit is not None:
                self._on_exit()

    def __iter__(self) -> Iterator[T]:
        """The items as they come; stopping early leaves the producer running to completion."""
        while True:
            kind, value = self._queue.get()
            if kind == _ITEM:
                yield value  # type: ignore[misc]
            elif kind == _ERROR:
                raise value  # type: ignore[misc]
            else:
                return
