"""Threads with an owner, against a real server on 127.0.0.1: the server mints every thread id (128 bits) with a
capability token; someone else's thread — read or changed, JSON or SSE — is 404 and stays as its owner left it; a
client-chosen id such as "1" never makes strangers share; with GPU_ADVISOR_API_KEYS the key that started a thread
also opens it."""

from __future__ import annotations

import re
from pathlib import Path

import httpx2
import pytest

from tests.web_server import parse_sse, serve, test_settings
from tools.catalog.query import ensure_db

ALICE_JOB = "QLoRA on Llama 3 70B, budget 300 dollars, dataset 50M tokens"
BOB_JOB = "LoRA fine-tune of Mistral 7B, budget 40 dollars"
KEYS = ("key-alice-0123456789", "key-bob-9876543210")


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The offers database built once from the shipped snapshot."""
    return ensure_db(tmp_path_factory.mktemp("catalog") / "catalog.sqlite")


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory, catalog: Path):
    """A client on a server with two API keys configured."""
    settings = test_settings(tmp_path_factory.mktemp("threads"), catalog, api_keys=list(KEYS))
    with serve(settings) as running, httpx2.Client(base_url=running.url, timeout=60) as client:
        yield client


def stream_result(http: httpx2.Client, body: dict, headers: dict | None = None) -> tuple[int, list]:
    """POST /api/chat/stream: (status, events)."""
    with http.stream("POST", "/api/chat/stream", json=body, headers=headers or {}) as response:
        text = "".join(response.iter_text())
    return response.status_code, (parse_sse(text) if response.status_code == 200 else [])


def assert_not_found(response: httpx2.Response) -> None:
    """A one-line JSON 404 that names no one's data."""
    assert response.status_code == 404, response.text[:300]
    assert response.json()["error"]["code"] == "thread_not_found"
    assert "llama" not in response.text.lower() and "Traceback" not in response.text


def test_the_server_mints_an_unguessable_id_and_a_token(http):
    first = http.post("/api/chat", json={"message": ALICE_JOB}).json()
    status, events = stream_result(http, {"message": BOB_JOB})
    streamed = events[-1][1]["result"]
    assert status == 200 and events[-1][0] == "final"
    for result in (first, streamed):
        assert re.fullmatch(r"[0-9a-f]{32}", result["thread_id"])  # 128 bits
        assert len(result["thread_token"]) >= 40
    assert first["thread_id"] != streamed["thread_id"] and first["thread_token"] != streamed["thread_token"]


def test_someone_elses_thread_is_404_to_read_or_change_and_stays_as_it_was(http):
    alice = http.post("/api/chat", json={"message": ALICE_JOB}).json()
    bob = http.post("/api/chat", json={"message": BOB_JOB}).json()
    attempts = [
        {"message": "how much is that in euro?", "thread_id": alice["thread_id"]},
        {"message": "", "thread_id": alice["thread_id"], "changes": {"budget": {"amount": 1, "currency": "USD"}}},
        {"message": "make it 8 GPUs", "thread_id": alice["thread_id"], "thread_token": bob["thread_token"]},
    ]
    for body in attempts:
        assert_not_found(http.post("/api/chat", json=body))
        with http.stream("POST", "/api/chat/stream", json=body) as response:
            response.read()
            assert_not_found(response)
    mine = http.post(
        "/api/chat",
        json={
            "message": "",
            "thread_id": alice["thread_id"],
            "thread_token": alice["thread_token"],
            "changes": {"epochs": 2},
        },
    )
    assert mine.status_code == 200, mine.text
    spec = mine.json()["spec"]
    assert spec["model"] == alice["spec"]["model"] and spec["budget"] == alice["spec"]["budget"]
    assert spec["epochs"] == 2 and mine.json()["thread_token"] == alice["thread_token"]


def test_a_client_chosen_id_does_not_make_strangers_share(http):
    for body in ({"message": ALICE_JOB, "thread_id": "1"}, {"message": "and the budget?", "thread_id": "1"}):
        assert_not_found(http.post("/api/chat", json=body))
    first = http.post("/api/chat", json={"message": ALICE_JOB}).json()
    second = http.post("/api/chat", json={"message": "how much is that in euro?"}).json()
    assert first["thread_id"] != second["thread_id"]
    assert second["spec"] is None or second["spec"].get("model") is None  # the stranger sees no one's job


def test_the_owner_continues_over_sse_with_the_token(http):
    first = http.post("/api/chat", json={"message": ALICE_JOB}).json()
    status, events = stream_result(
        http, {"message": "make it 2 GPUs", "thread_id": first["thread_id"], "thread_token": first["thread_token"]}
    )
    result = events[-1][1]["result"]
    assert status == 200 and result["thread_id"] == first["thread_id"]
    assert result["spec"]["model"] == first["spec"]["model"] and result["spec"]["num_gpus"] == 2


def test_the_api_key_that_started_a_thread_opens_it_and_no_other_key_does(http):
    alice_key = {"Authorization": f"Bearer {KEYS[0]}"}
    started = http.post("/api/chat", json={"message": ALICE_JOB}, headers=alice_key).json()
    again = http.post(
        "/api/chat",
        json={"message": "", "thread_id": started["thread_id"], "changes": {"epochs": 3}},
        headers=alice_key,
    )
    assert again.status_code == 200, again.text
    assert again.json()["spec"]["epochs"] == 3 and again.json()["thread_token"] is None  # the key is not the token
    status, events = stream_result(
        http, {"message": "make it 2 GPUs", "thread_id": started["thread_id"]}, headers={"X-API-Key": KEYS[0]}
    )
    assert status == 200 and events[-1][1]["result"]["spec"]["epochs"] == 3
    assert_not_found(
        http.post(
            "/api/chat",
            json={"message": "and the budget?", "thread_id": started["thread_id"]},
            headers={"Authorization": f"Bearer {KEYS[1]}"},
        )
    )
    wrong = http.post("/api/chat", json={"message": ALICE_JOB}, headers={"Authorization": "Bearer not-a-key"})
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "invalid_api_key"
    assert "not-a-key" not in wrong.text
    by_token = http.post(
        "/api/chat",
        json={
            "message": "",
            "thread_id": started["thread_id"],
            "thread_token": started["thread_token"],
            "changes": {"epochs": 4},
        },
    )
    assert by_token.status_code == 200 and by_token.json()["spec"]["epochs"] == 4
