"""A chat turn over HTTP hops threads only where it blocks: its route dependencies are coroutines, so FastAPI never
sends them to AnyIO's worker threads (each such hop waits for the GIL while other turns run)."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx2
import pytest

from tests.web_server import serve, test_settings
from tools.catalog.query import ensure_db

ANYIO_WORKER = "AnyIO worker thread"


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The offers database built once from the shipped snapshot."""
    return ensure_db(tmp_path_factory.mktemp("catalog") / "catalog.sqlite")


def anyio_workers() -> set[threading.Thread]:
    """The AnyIO worker threads alive now."""
    return {thread for thread in threading.enumerate() if thread.name == ANYIO_WORKER}


def test_chat_stream_compare_and_export_start_no_anyio_worker_thread(tmp_path, catalog):
    with serve(test_settings(tmp_path, catalog)) as server, httpx2.Client(base_url=server.url, timeout=60) as client:
        before = anyio_workers()
        first = client.post("/api/chat", json={"message": "LoRA on Llama 3 8B, 2 epochs of 50M tokens"})
        assert first.status_code == 200, first.text
        thread = {"thread_id": first.json()["thread_id"], "thread_token": first.json()["thread_token"]}
        follow = client.post("/api/chat", json={"message": "and with 2 GPUs?", **thread})
        assert follow.status_code == 200, follow.text
        with client.stream("POST", "/api/chat/stream", json={"message": "cheaper?", **thread}) as stream:
            assert stream.status_code == 200 and "event: final" in "".join(stream.iter_text())
        turn = follow.json()
        export = {key: turn[key] for key in ("language", "spec", "estimate", "catalog")} | {
            "offers": turn["offers"][:1]
        }
        assert client.post("/api/export/skypilot", json=export).status_code == 200
        assert client.get("/api/compare", params={"gpu": "H100"}).status_code == 200
        assert anyio_workers() - before == set()
