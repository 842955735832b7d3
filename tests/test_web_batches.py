"""The SSE route's producer hands its items to the event loop (web.blocking.batches_in_thread): all of them, in order,
with the producer's error after them, and empty batches while it is idle."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from web.blocking import batches_in_thread


def test_items_emitted_together_arrive_in_order() -> None:
    def produce(emit: Any) -> None:
        for item in range(200):
            emit(item)

    async def read() -> list[list[int]]:
        with ThreadPoolExecutor(1) as pool:
            return [batch async for batch in batches_in_thread(pool, produce)]

    batches = asyncio.run(read())
    assert [item for batch in batches for item in batch] == list(range(200))
    assert all(batches), "no empty batch without an idle timeout"


def test_the_producers_error_comes_after_its_items() -> None:
    def produce(emit: Any) -> None:
        emit(1)
        emit(2)
        raise ValueError("bad input")

    async def read() -> list[int]:
        seen: list[int] = []
        with ThreadPoolExecutor(1) as pool:
            async for batch in batches_in_thread(pool, produce):
                seen.extend(batch)
        return seen

    with pytest.raises(ValueError, match="bad input"):
        asyncio.run(read())


def test_an_idle_producer_yields_empty_batches_then_its_items() -> None:
    def produce(emit: Any) -> None:
        import time

        time.sleep(0.25)
        emit(7)

    async def read() -> list[list[int]]:
        with ThreadPoolExecutor(1) as pool:
            return [batch async for batch in batches_in_thread(pool, produce, idle_s=0.05)]

    batches = asyncio.run(read())
    assert batches[-1] == [7] and [] in batches[:-1]
