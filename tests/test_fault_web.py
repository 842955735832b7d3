"""The server under faults, for real: `gpu-advisor serve` processes on 127.0.0.1 (spoofed X-Forwarded-For, a body
that never finishes, a hostile Host header, a bad --host, kill -9 mid-load) and uvicorn with a damaged, foreign or
missing catalog (a clear 503 for the job part, FAQ answers still work)."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest
import uvicorn

from tests.web_server import parse_sse, serve, test_settings
from tools.catalog.query import build_from_snapshot, inspect_catalog, read_meta
from web.app import create_app
from web.serving.listen import uvicorn_proxy_options

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "from cli.app import run; run()"]
JOB = "QLoRA on Llama 3 8B, 20k examples, budget 50 USD"
FAQ = "Can I use spot instances for fine-tuning?"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def serve_process(home: Path, **env_extra: str) -> Iterator[tuple[str, subprocess.Popen]]:
    """`gpu-advisor serve` as a real process; yields (base URL, process) once /healthz says the advisor is ready."""
    port = free_port()
    env = {**os.environ, "GPU_ADVISOR_HOME": str(home), **env_extra}
    for name in ("GPU_ADVISOR_DB", "GPU_ADVISOR_TRUSTED_PROXIES", "GPU_ADVISOR_DATABASE_URL", "SLACK_BOT_TOKEN"):
        if name not in env_extra:
            env.pop(name, None)
    process = subprocess.Popen(
        [*CLI, "serve", "--port", str(port), "--json"],
        env=env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"serve exited {process.returncode}: {process.stderr.read()[-2000:]}")
            try:
                if httpx2.get(f"{url}/healthz", timeout=2).json().get("advisor"):
                    break
            except (httpx2.TransportError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("serve did not become ready")
            time.sleep(0.2)
        yield url, process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for stream in (process.stdout, process.stderr):
            if stream:
                stream.close()


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_from_snapshot(tmp_path_factory.mktemp("catalog") / "catalog.sqlite")


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory, catalog: Path):
    """One real serve process: 3 requests at once then 1 per minute, bodies within 2 s, no trusted proxy."""
    home = tmp_path_factory.mktemp("home")
    with serve_process(
        home,
        GPU_ADVISOR_DB=str(catalog),
        GPU_ADVISOR_RATE_PER_MINUTE="1",
        GPU_ADVISOR_RATE_BURST="3",
        GPU_ADVISOR_BODY_TIMEOUT_S="2",
    ) as (url, _):
        yield url


# ------------------------------------------------------------------------------------------- X-Forwarded-For


def test_spoofed_forwarded_for_does_not_escape_the_rate_limit(limited: str) -> None:
    statuses = [
        httpx2.get(
            f"{limited}/api/faq", params={"question": FAQ}, timeout=30, headers={"X-Forwarded-For": f"203.0.113.{i}"}
        ).status_code
        for i in range(8)
    ]
    assert statuses[:3] == [200, 200, 200] and set(statuses[3:]) == {429}, statuses


def test_forwarded_for_counts_only_from_a_trusted_proxy(catalog: Path, tmp_path: Path) -> None:
    options = uvicorn_proxy_options({"GPU_ADVISOR_TRUSTED_PROXIES": "127.0.0.1/32"})
    assert options == {"proxy_headers": True, "forwarded_allow_ips": "127.0.0.1/32"}
    app = create_app(test_settings(tmp_path, catalog, rate_per_minute=1, rate_burst=2))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", **options))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            assert thread.is_alive()
            time.sleep(0.05)
        url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"

        def get(forwarded: str) -> int:
            return httpx2.get(
                f"{url}/api/faq", params={"question": FAQ}, timeout=30, headers={"X-Forwarded-For": forwarded}
            ).status_code

        # the proxy (127.0.0.1) appends the real client: each client has its own bucket, whatever it sent first
        assert [get("198.51.100.1") for _ in range(3)] == [200, 200, 429]
        assert [get("9.9.9.9, 198.51.100.2") for _ in range(3)] == [200, 200, 429]
        assert get("198.51.100.1, 198.51.100.2") == 429  # the left-most entry is the client's to choose
    finally:
        server.should_exit = True
        thread.join(timeout=30)
    assert uvicorn_proxy_options({}) == {"proxy_headers": False}


# ------------------------------------------------------------------------------------------- slow body, Host


def test_a_body_that_never_finishes_is_cut_off(limited: str) -> None:
    port = int(limited.rsplit(":", 1)[1])
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(
            b"POST /demo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'Content-Length: 100\r\n\r\n{"question": '
        )
        received = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    elapsed = time.monotonic() - started
    assert received.startswith(b"HTTP/1.1 408"), received[:200]
    assert b'"request_timeout"' in received
    assert elapsed < 20  # cut off after the 2 s body limit (uvicorn would otherwise wait without end)


def test_demo_page_never_reflects_the_host_header(limited: str) -> None:
    evil = 'evil.example"><script>alert(1)</script>'
    page = httpx2.get(f"{limited}/demo", headers={"Host": evil}, timeout=30).text
    assert "evil.example" not in page
    assert f'<script src="{limited}/widget/widget.js" data-api="{limited}"' in page


def test_compare_page_never_reflects_the_host_header(limited: str) -> None:
    """/compare points its scripts at the server's own address, whatever Host a client (or a shared cache's first
    visitor) sends."""
    page = httpx2.get(f"{limited}/compare", headers={"Host": "evil.example"}, timeout=30).text
    assert "evil.example" not in page
    assert f'src="{limited}/widget/compare/app.js"' in page


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--host", "999.999.999.999"], "cannot listen on --host '999.999.999.999'"),
        (["--host", "127.0.0.1", "--port", "{busy}"], "cannot listen on 127.0.0.1:{busy}"),
    ],
)
def test_serve_with_an_unusable_address_is_one_line(tmp_path: Path, argv: list[str], expected: str) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        argv = [a.replace("{busy}", port) for a in argv]
        env = {**os.environ, "GPU_ADVISOR_HOME": str(tmp_path)}
        done = subprocess.run([*CLI, "serve", *argv], env=env, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("error: " + expected.replace("{busy}", port)) and done.stderr.count("\n") == 1


# ------------------------------------------------------------------------------------------- catalog faults


def _damage_meta(path: Path) -> None:
    conn = sqlite3.connect(path)
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'meta'").fetchone()[0]
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with open(path, "r+b") as handle:
        handle.seek((root - 1) * page)
        handle.write(b"\x00" * page)


def test_a_catalog_damaged_before_start_is_rebuilt_and_chat_works(tmp_path: Path) -> None:
    path = build_from_snapshot(tmp_path / "catalog.sqlite")
    _damage_meta(path)
    with serve(test_settings(tmp_path, path)) as running:
        with httpx2.Client(base_url=running.url, timeout=120) as client:
            result = client.post("/api/chat", json={"message": JOB}).json()
    assert result["offers"], result
    assert [p.name for p in tmp_path.iterdir() if ".damaged-" in p.name]
    assert inspect_catalog(path).state == "ok"


def test_a_catalog_damaged_while_serving_still_answers_the_turn_and_faq_works(tmp_path: Path) -> None:
    """The job turn says the catalog is unavailable, with the memory estimate (no 503, no path); FAQ answers."""
    path = build_from_snapshot(tmp_path / "catalog.sqlite")
    with serve(test_settings(tmp_path, path)) as running, httpx2.Client(base_url=running.url, timeout=120) as client:
        assert client.post("/api/chat", json={"message": JOB}).json()["offers"]
        _damage_meta(path)
        job = client.post("/api/chat", json={"message": JOB})
        assert job.status_code == 200, job.text
        body = job.json()
        assert body["offers"] == [] and "GiB" in body["answer"] and str(tmp_path) not in body["answer"]
        with client.stream("POST", "/api/chat/stream", json={"message": JOB}) as response:
            events = parse_sse("".join(response.iter_text()))
        assert events[-1][0] == "final" and events[-1][1]["result"]["answer"] == body["answer"]
        faq = client.post("/api/chat", json={"message": FAQ})
        assert faq.status_code == 200 and faq.json()["intent"] == "faq" and faq.json()["citations"]
        catalog = client.get("/api/catalog", params={"min_vram_gib": 40})  # reads the damaged meta table
        assert catalog.status_code == 503 and catalog.json()["error"]["code"] == "catalog_unavailable"


def test_a_foreign_catalog_path_is_untouched_and_the_server_still_answers_faq(tmp_path: Path) -> None:
    foreign = tmp_path / "notes.txt"
    foreign.write_text("notes\n")
    with serve(test_settings(tmp_path, foreign)) as running, httpx2.Client(base_url=running.url, timeout=120) as client:
        assert client.get("/healthz").json()["advisor"] is True
        job = client.post("/api/chat", json={"message": JOB})
        assert job.status_code == 200 and job.json()["offers"] == [] and "GiB" in job.json()["answer"], job.text
        assert client.post("/api/chat", json={"message": FAQ}).json()["intent"] == "faq"
    assert foreign.read_text() == "notes\n"


# ------------------------------------------------------------------------------------------- kill -9 mid-load


def test_kill_9_mid_load_leaves_catalog_and_threads_usable(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    stop = threading.Event()
    answered: list[str] = []

    def load(url: str) -> None:
        while not stop.is_set():
            try:
                result = httpx2.post(f"{url}/api/chat", json={"message": JOB}, timeout=60).json()
                answered.append((result["thread_id"], result["thread_token"]))
            except (httpx2.HTTPError, ValueError, KeyError):
                pass

    with serve_process(home, GPU_ADVISOR_RATE_PER_MINUTE="0") as (url, process):
        workers = [threading.Thread(target=load, args=(url,), daemon=True) for _ in range(3)]
        for worker in workers:
            worker.start()
        deadline = time.monotonic() + 60
        while len(answered) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        os.kill(process.pid, signal.SIGKILL)  # mid-load: turns in flight
        process.wait(timeout=30)
        stop.set()
        for worker in workers:
            worker.join(timeout=70)
    assert len(answered) >= 2
    assert inspect_catalog(home / "catalog.sqlite").state == "ok"
    threads_db = home / "threads.sqlite"
    conn = sqlite3.connect(threads_db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    with serve_process(home, GPU_ADVISOR_RATE_PER_MINUTE="0") as (url, _):
        follow_up = httpx2.post(
            f"{url}/api/chat",
            json={"message": "make it 2 GPUs", "thread_id": answered[0][0], "thread_token": answered[0][1]},
            timeout=120,
        ).json()
    assert follow_up["thread_id"] == answered[0][0] and follow_up["spec"]["num_gpus"] == 2
    assert follow_up["spec"]["model"], follow_up["spec"]
    assert read_meta(home / "catalog.sqlite")["offer_count"] > 1000


# ------------------------------------------------------------------------------------------- Slack headers


@pytest.mark.parametrize("timestamp", ["abc", "1e9", "", "12a", "-5"])
def test_a_malformed_slack_timestamp_is_401_not_500(
    tmp_path: Path, catalog: Path, monkeypatch: pytest.MonkeyPatch, timestamp: str
) -> None:
    from tests.slack_fakes import BOT_TOKEN, SIGNING_SECRET

    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("SLACK_SIGNING_SECRET", SIGNING_SECRET)
    with serve(test_settings(tmp_path, catalog)) as running:
        response = httpx2.post(
            f"{running.url}/slack/events",
            content=b'{"type": "event_callback"}',
            timeout=30,
            headers={
                "Content-Type": "application/json",
                "X-Slack-Signature": "v0=" + "0" * 64,
                "X-Slack-Request-Timestamp": timestamp,
            },
        )
    assert response.status_code == 401, response.text
    assert response.json()["error"]["code"] == "unauthorized"


# ------------------------------------------------------------------------------------------- read-only storage


def test_serve_on_a_read_only_data_folder_is_one_line(tmp_path: Path) -> None:
    from tests.read_only import read_only_home, run_read_only

    home, env = read_only_home(tmp_path)
    done = run_read_only(home, [*CLI, "serve", "--port", str(free_port())], env=env, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if not line.startswith("note: ")]
    assert lines == [lines[0]] and lines[0].startswith("error: cannot open the conversation threads at")
    assert "GPU_ADVISOR_HOME" in lines[0] and "Traceback" not in done.stderr
