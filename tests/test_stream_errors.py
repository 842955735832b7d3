"""A turn the advisor refuses (changes that fail the job spec) ends an SSE stream with one `error` event whose message
is the same one human line /api/chat answers with — never pydantic's raw multi-line text — against a real server."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest

from tests.web_server import parse_sse, serve, test_settings
from tools.catalog import ensure_db

BAD_CHANGES = [
    {"num_gpus": -3},
    {"epochs": "many", "seq_len": 10**12},
    {"dataset_tokens": [1, 2]},
    {"method": "x" * 5000},
    {"gpu": "foo9000", "params_b": 7},  # valid fields the turn's tools refuse (an unknown GPU without its memory)
    {"model": "no-such-model-0"},
]


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory):
    catalog = ensure_db(tmp_path_factory.mktemp("catalog") / "catalog.sqlite")
    with (
        serve(test_settings(tmp_path_factory.mktemp("threads"), Path(catalog))) as running,
        httpx2.Client(base_url=running.url, timeout=60) as client,
    ):
        yield client


@pytest.mark.parametrize("changes", BAD_CHANGES)
def test_a_refused_change_streams_the_same_one_line_error_as_chat(http, changes):
    body = {"message": "LoRA on Llama 3 8B", "changes": changes}
    plain = http.post("/api/chat", json=body)
    assert plain.status_code == 422
    expected = plain.json()["error"]["message"]
    with http.stream("POST", "/api/chat/stream", json=body) as response:
        text = "".join(response.iter_text())
    events = parse_sse(text) if response.status_code == 200 else []
    if response.status_code != 200:  # refused before the stream started (the schema gate): the same JSON error
        assert response.status_code == 422 and json.loads(text)["error"]["message"] == expected
        return
    kind, data = events[-1]
    assert kind == "error" and data["code"] in ("bad_request", "invalid_input"), events
    message = data["message"]
    assert "\n" not in message and "pydantic" not in message and "errors.pydantic.dev" not in message, message
    assert "validation error" not in message.lower() and len(message) < 600
    assert message == expected


def test_the_advisors_own_refusal_in_a_stream_is_one_line(tmp_path):
    """Below the HTTP schema gate: Advisor.stream refusing changes words them as /api/chat does, in one line."""
    from agent.service import Advisor

    advisor = Advisor(checkpoint_path=tmp_path / "threads.sqlite", db_path=tmp_path / "catalog.sqlite")
    try:
        events = list(advisor.stream("", changes={"num_gpus": -3, "epochs": "many"}))
    finally:
        advisor.close()
    assert [event["type"] for event in events] == ["error"] and events[0]["code"] == "bad_request"
    message = events[0]["message"]
    assert "\n" not in message and "pydantic" not in message and "num_gpus" in message and "epochs" in message


def test_a_slow_turn_keeps_the_stream_alive_with_comments_then_ends_normally(tmp_path, monkeypatch):
    """While a turn is silent longer than the keep-alive interval the stream sends `: ping` comments (proxies keep
    the connection), and the turn's events and final result still follow, over a real server."""
    import time

    import web.chat
    from agent.service import Advisor

    run_turn = Advisor._run_turn

    def slow_turn(self, *args, **kwargs):
        time.sleep(0.6)
        return run_turn(self, *args, **kwargs)

    monkeypatch.setattr(web.chat, "PING_INTERVAL_S", 0.1)
    monkeypatch.setattr(Advisor, "_run_turn", slow_turn)
    catalog = ensure_db(tmp_path / "catalog.sqlite")
    with (
        serve(test_settings(tmp_path, Path(catalog))) as running,
        httpx2.Client(base_url=running.url, timeout=60) as client,
        client.stream("POST", "/api/chat/stream", json={"message": "LoRA on Llama 3 8B, budget $50"}) as response,
    ):
        text = "".join(response.iter_text())
    assert response.status_code == 200 and response.headers["cache-control"] == "no-cache"
    assert response.headers["x-thread-id"] and response.headers["x-accel-buffering"] == "no"
    assert text.startswith(": ping\n\n") and text.count(": ping\n\n") >= 3
    events = parse_sse(text)
    assert events[-1][0] == "final" and events[-1][1]["result"]["thread_id"] == response.headers["x-thread-id"]


def test_the_stream_advertises_server_sent_events_only():
    """The OpenAPI document says the stream's 200 is `text/event-stream` events (FastAPI's SSE item schema) and
    nothing else: a schema-driven client or fuzzer (schemathesis) validates each event, not the body as a string."""
    from web.app import create_app

    ok = create_app().openapi()["paths"]["/api/chat/stream"]["post"]["responses"]["200"]
    assert list(ok["content"]) == ["text/event-stream"]
    sse = ok["content"]["text/event-stream"]
    assert "schema" not in sse and sse["itemSchema"]["type"] == "object"
    assert set(sse["itemSchema"]["properties"]) == {"data", "event", "id", "retry"}
