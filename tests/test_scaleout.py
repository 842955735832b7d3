"""More than one process on the embedded SQLite store: `serve --workers 2` must not lose a thread's updates, and a
streaming client that leaves must not lose its turn."""

from __future__ import annotations

import multiprocessing
import time

import httpx2
import pytest

from tests.serve_process import FIRST_MESSAGE, ServeProcess, chat, free_port, race_follow_ups, serve_env

THREADS = 6


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory):
    """`gpu-advisor serve --workers 2` on one SQLite threads file."""
    home = tmp_path_factory.mktemp("workers")
    server = ServeProcess(port=free_port(), env=serve_env(home), workers=2).start()
    yield server
    server.stop()


def test_follow_ups_racing_on_one_thread_across_worker_processes_lose_nothing(two_workers):
    turns, lost = race_follow_ups([two_workers.url], THREADS)
    assert not lost, f"{len(lost)} of {THREADS} threads lost an update:\n" + "\n".join(lost)
    assert turns == THREADS * 9


def _turns_in_a_process(path: str, catalog: str, thread: str, changes: list[dict], ready, go) -> None:
    """Run follow-ups on `thread` with an Advisor of this process, starting when `go` is set."""
    from agent.service import Advisor

    advisor = Advisor(checkpoint_path=path, db_path=catalog)
    ready.set()
    go.wait(30)
    for change in changes:
        advisor.respond("", thread_id=thread, changes=change)
    advisor.close()


def test_two_advisor_processes_on_one_sqlite_file_serialise_a_threads_turns(tmp_path):
    from agent.service import Advisor

    path, catalog = str(tmp_path / "threads.sqlite"), str(tmp_path / "catalog.sqlite")
    advisor = Advisor(checkpoint_path=path, db_path=catalog)
    thread = advisor.respond(FIRST_MESSAGE)["thread_id"]
    context = multiprocessing.get_context("spawn")
    go = context.Event()
    halves = ([{"epochs": 2}, {"seq_len": 1024}], [{"micro_batch_size": 2}, {"deadline_hours": 48}])
    readies = [context.Event() for _ in halves]
    processes = [
        context.Process(target=_turns_in_a_process, args=(path, catalog, thread, half, ready, go))
        for half, ready in zip(halves, readies)
    ]
    for process in processes:
        process.start()
    for ready in readies:
        assert ready.wait(120)
    go.set()
    for process in processes:
        process.join(120)
        assert process.exitcode == 0
    spec = advisor.respond("", thread_id=thread, changes={"precision": "bf16"})["spec"]
    advisor.close()
    assert (spec["epochs"], spec["seq_len"], spec["micro_batch_size"], spec["deadline_hours"]) == (2, 1024, 2, 48)


def test_streaming_clients_that_disconnect_still_get_their_turns_saved(two_workers):
    url = two_workers.url
    threads = []
    for _ in range(5):
        with httpx2.stream("POST", f"{url}/api/chat/stream", timeout=60, json={"message": FIRST_MESSAGE}) as response:
            threads.append(
                {"thread_id": response.headers["x-thread-id"], "thread_token": response.headers["x-thread-token"]}
            )  # known before the first event
            for line in response.iter_lines():
                if line.startswith("event: progress"):
                    break  # the browser tab closes after the first progress event
    time.sleep(3)  # the server notices the closed connections while the turns run on
    kept = [chat(url, {"message": "", **thread, "changes": {"seq_len": 512}})["spec"] for thread in threads]
    lost = [
        thread["thread_id"]
        for thread, spec in zip(threads, kept)
        if spec.get("method") != "lora" or not spec.get("model")
    ]
    assert not lost, f"{len(lost)} of {len(threads)} streamed turns were not saved: {lost}"


def test_a_stream_closed_after_its_first_event_still_finishes_and_saves_the_turn(tmp_path):
    from agent.service import Advisor

    advisor = Advisor(checkpoint_path=tmp_path / "threads.sqlite", db_path=tmp_path / "catalog.sqlite")
    events = advisor.stream(FIRST_MESSAGE, thread_id="closed-early")
    assert next(events)["type"] == "progress"
    events.close()  # the consumer goes away after the first event
    advisor.close()  # waits for turns still running, then closes the store
    reopened = Advisor(checkpoint_path=tmp_path / "threads.sqlite", db_path=tmp_path / "catalog.sqlite")
    spec = reopened.respond("", thread_id="closed-early", changes={"epochs": 2})["spec"]
    reopened.close()
    assert spec["method"] == "lora" and spec["epochs"] == 2


def test_worker_processes_share_one_rate_limit_bucket_per_client(tmp_path):
    env = serve_env(tmp_path, GPU_ADVISOR_RATE_PER_MINUTE="1", GPU_ADVISOR_RATE_BURST="4")
    server = ServeProcess(port=free_port(), env=env, workers=2).start()
    try:
        statuses, start = [], time.monotonic()
        for _ in range(16):  # a new connection each: the kernel spreads them over both workers
            with httpx2.Client(timeout=30) as client:
                statuses.append(client.post(f"{server.url}/api/chat", json={"message": ""}).status_code)
        refilled = int((time.monotonic() - start) / 60)  # one token a minute comes back
    finally:
        server.stop()
    allowed = [s for s in statuses if s != 429]
    assert 4 <= len(allowed) <= 4 + refilled, statuses  # the burst once, not once per worker
