"""web.blocking.batches_in_thread with a hold: a fast producer's many small items arrive in few lists (one wake-up
and one write each), an urgent item goes out at once with those before it, a slow producer's items still arrive
within the hold, and the end, an error and the keep-alive keep their meaning."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from web.blocking import batches_in_thread


def _collect(
    produce: Callable[[Callable[[object], None]], None], **options: object
) -> list[tuple[float, list[object]]]:
    """Each list the consumer got, with the seconds since the start when it got it."""

    async def main() -> list[tuple[float, list[object]]]:
        start = time.monotonic()
        got = []
        with ThreadPoolExecutor(2) as pool:
            async for batch in batches_in_thread(pool, produce, **options):  # type: ignore[arg-type]
                got.append((time.monotonic() - start, batch))
        return got

    return asyncio.run(main())


def _fast(emit: Callable[[object], None]) -> None:
    """Ten progress items, an urgent one, then the last: a quick turn."""
    for index in range(10):
        emit(("progress", index))
    emit(("verdict", 10))
    emit(("final", 11))


def _urgent(item: object) -> bool:
    return item[0] in ("verdict", "final")  # type: ignore[index]


def test_a_fast_producer_arrives_in_few_lists_in_order() -> None:
    got = _collect(_fast, hold_s=0.5, urgent=_urgent)
    assert [item for _, batch in got for item in batch] == [("progress", i) for i in range(10)] + [
        ("verdict", 10),
        ("final", 11),
    ]
    assert len(got) <= 2, "the held items went out with the urgent one"
    assert got[-1][0] < 0.4, "nothing waited for the hold: the urgent items flushed it"


def test_without_a_hold_each_item_may_go_alone() -> None:
    got = _collect(_slowly(0.02, 5))
    assert [len(batch) for _, batch in got] == [1] * 5


def _slowly(pause_s: float, count: int) -> Callable[[Callable[[object], None]], None]:
    """A producer that emits `count` plain items `pause_s` apart (a slow turn's progress)."""

    def produce(emit: Callable[[object], None]) -> None:
        for index in range(count):
            emit(("progress", index, time.monotonic()))
            time.sleep(pause_s)

    return produce


def test_a_slow_producer_s_items_arrive_within_the_hold() -> None:
    start = time.monotonic()
    got = _collect(_slowly(0.15, 4), hold_s=0.05, urgent=_urgent)
    items = [(at, item) for at, batch in got for item in batch]
    assert [item[1] for _, item in items] == [0, 1, 2, 3]
    for at, item in items:
        emitted = item[2] - start  # type: ignore[index]
        assert at - emitted < 0.05 + 0.1, "held no longer than the hold (and scheduling slack)"
    assert len(got) >= 3, "items apart by more than the hold are not gathered into one list"


def test_the_error_comes_after_the_items_before_it() -> None:
    def failing(emit: Callable[[object], None]) -> None:
        emit(("progress", 0))
        raise RuntimeError("broken")

    seen: list[object] = []

    async def main() -> None:
        with ThreadPoolExecutor(1) as pool:
            async for batch in batches_in_thread(pool, failing, hold_s=0.5, urgent=_urgent):
                seen.extend(batch)

    with pytest.raises(RuntimeError, match="broken"):
        asyncio.run(main())
    assert seen == [("progress", 0)]


def test_a_quiet_producer_gets_keep_alives() -> None:
    got = _collect(_slowly(0.35, 2), idle_s=0.1, hold_s=0.05, urgent=_urgent)
    assert sum(1 for _, batch in got if batch == []) >= 2
    assert [item[1] for _, batch in got for item in batch] == [0, 1]  # type: ignore[index]
