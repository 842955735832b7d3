"""Chat turns run in their own pool (issue 27): offline, a worker runs OFFLINE_TURN_THREADS turns at once (a turn
is all CPU; more threads only contend for the GIL) and the rest wait their turn and are answered; with an LLM, turns
mostly wait on it and many run at once; GPU_ADVISOR_TURN_THREADS chooses. Over a real server."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx2
import pytest

from tests.web_server import serve, test_settings
from tools.catalog import ensure_db
from web.app import ADVISOR_THREADS, OFFLINE_TURN_THREADS, turn_threads
from web.settings import ServerSettings


def _most_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, requests: int, **settings: object
) -> tuple[int, list[int]]:
    """The most turns that ran at once while `requests` clients each sent one, and the status codes they got."""
    from agent.service import Advisor

    running, most, lock = [0], [0], threading.Lock()
    run_turn = Advisor._run_turn

    def counted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            time.sleep(0.15)  # long enough for every request to arrive while the first turns run
            return run_turn(self, *args, **kwargs)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(Advisor, "_run_turn", counted)
    catalog = ensure_db(tmp_path / "catalog.sqlite")
    with serve(test_settings(tmp_path, Path(catalog), **settings)) as server:

        def ask(index: int) -> int:
            body = {"message": f"LoRA on Llama 3 8B, budget ${50 + index}"}
            return httpx2.post(f"{server.url}/api/chat", json=body, timeout=120).status_code

        with ThreadPoolExecutor(requests) as clients:
            codes = list(clients.map(ask, range(requests)))
    return most[0], codes


def test_offline_turns_run_a_few_at_a_time_and_all_are_answered(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    most, codes = _most_at_once(tmp_path, monkeypatch, 6)
    assert codes == [200] * 6
    assert most == OFFLINE_TURN_THREADS == 2


def test_the_setting_chooses_how_many(tmp_path, monkeypatch) -> None:
    most, codes = _most_at_once(tmp_path, monkeypatch, 6, turn_threads=4)
    assert codes == [200] * 6 and most == 4


def test_with_an_llm_many_turns_run_at_once(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.delenv("GPU_ADVISOR_OFFLINE", raising=False)
    assert turn_threads(ServerSettings()) == ADVISOR_THREADS
    monkeypatch.setenv("GPU_ADVISOR_OFFLINE", "1")
    assert turn_threads(ServerSettings()) == OFFLINE_TURN_THREADS
    assert turn_threads(ServerSettings.from_env({"GPU_ADVISOR_TURN_THREADS": "3"})) == 3
