"""The token bucket, settings from the environment, and `gpu-advisor serve` as a real process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from web.rate_limit.base import TokenBucketLimiter, retry_after_header
from web.settings import ServerSettings


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@settings(max_examples=60, deadline=None)
@given(per_minute=st.floats(1, 600), burst=st.integers(1, 20), gaps=st.lists(st.floats(0, 5), min_size=1, max_size=80))
def test_bucket_never_allows_more_than_burst_plus_rate_times_time(per_minute, burst, gaps):
    clock = FakeClock()
    limiter = TokenBucketLimiter(per_minute=per_minute, burst=burst, clock=clock)
    allowed = 0
    for gap in gaps:
        clock.now += gap
        wait = limiter.acquire("client")
        if wait is None:
            allowed += 1
        else:
            assert wait > 0
            clock_then = clock.now
            clock.now += wait  # waiting as told is enough
            assert limiter.acquire("probe-" + str(clock_then)) is None
            assert limiter.acquire("client") is None
            allowed += 1
    elapsed = clock.now - 1000.0
    assert allowed <= burst + per_minute / 60.0 * elapsed + 1e-6


def test_bucket_is_per_client_and_off_at_zero():
    clock = FakeClock()
    limiter = TokenBucketLimiter(per_minute=60, burst=2, clock=clock)
    assert [limiter.acquire("a") for _ in range(2)] == [None, None]
    wait = limiter.acquire("a")
    assert wait == pytest.approx(1.0) and retry_after_header(wait) == "1"
    assert limiter.acquire("b") is None
    off = TokenBucketLimiter(per_minute=0, burst=1, clock=clock)
    assert all(off.acquire("a") is None for _ in range(100))
    with pytest.raises(ValueError):
        TokenBucketLimiter(per_minute=-1, burst=1)


def test_settings_from_environment_and_back():
    env = {
        "GPU_ADVISOR_PORT": "9001",
        "GPU_ADVISOR_ALLOWED_ORIGINS": "https://a.example/, https://b.example",
        "GPU_ADVISOR_WORKERS": "2",
    }
    loaded = ServerSettings.from_env(env, host="0.0.0.0")
    assert (loaded.host, loaded.port, loaded.workers) == ("0.0.0.0", 9001, 2)
    assert loaded.allowed_origins == ["https://a.example", "https://b.example"]
    assert ServerSettings.from_env(loaded.to_env()) == loaded
    with pytest.raises(ValueError):
        ServerSettings.from_env({"GPU_ADVISOR_PORT": "not-a-port"})


def test_serve_uses_one_worker_per_core_unless_told_otherwise():
    cores = len(os.sched_getaffinity(0))  # the cores this process may run on (a container's share)
    assert ServerSettings.from_env({}).workers == min(cores, 64)
    assert ServerSettings.from_env({"GPU_ADVISOR_WORKERS": "1"}).workers == 1
    assert ServerSettings.from_env({}, workers=3).workers == 3


def _free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_serve_command_starts_the_api_and_prints_the_demo_url(tmp_path):
    port = _free_port()
    env = {**os.environ, "GPU_ADVISOR_HOME": str(tmp_path), "GPU_ADVISOR_ALLOWED_ORIGINS": "https://docs.example.com"}
    command = [sys.executable, "-c", "from cli.app import run; run()", "serve", "--port", str(port), "--json"]
    process = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    try:
        deadline = time.monotonic() + 60
        health = None
        while time.monotonic() < deadline and process.poll() is None:
            try:
                health = httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=2).json()
                if health.get("advisor"):
                    break
            except httpx2.TransportError:
                time.sleep(0.2)
        assert health and health["advisor"], process.stderr.read() if process.poll() is not None else "timeout"
        demo = httpx2.get(f"http://127.0.0.1:{port}/demo", timeout=10)
        assert f'src="http://127.0.0.1:{port}/widget/widget.js"' in demo.text
        preflight = httpx2.options(
            f"http://127.0.0.1:{port}/api/chat",
            timeout=10,
            headers={"Origin": "https://docs.example.com", "Access-Control-Request-Method": "POST"},
        )
        assert preflight.headers["access-control-allow-origin"] == "https://docs.example.com"
        assert (tmp_path / "catalog.sqlite").exists()  # GPU_ADVISOR_HOME reached the worker
    finally:
        process.terminate()
        out, _ = process.communicate(timeout=30)
    printed = json.loads(out)
    assert printed["urls"]["demo"] == f"http://127.0.0.1:{port}/demo"
    assert printed["allowed_origins"] == ["https://docs.example.com"]


def test_serve_rejects_a_bad_port_with_one_line():
    from cli.app import main

    assert main(["serve", "--port", "99999"]) == 2


def test_serve_rejects_a_malformed_slack_token_in_one_line(tmp_path):
    script = Path(sys.executable).parent / "gpu-advisor"
    env = dict(os.environ, GPU_ADVISOR_HOME=str(tmp_path), SLACK_BOT_TOKEN="not-a-token", SLACK_SIGNING_SECRET="secret")
    done = subprocess.run([str(script), "serve", "--port", "1"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "SLACK_BOT_TOKEN" in done.stderr
    assert "not-a-token" not in done.stderr and "Traceback" not in done.stderr


def test_serve_with_an_unreachable_postgresql_says_so_in_one_line_without_the_password(tmp_path):
    script = Path(sys.executable).parent / "gpu-advisor"
    url = f"postgresql://advisor:s3cret-pw@127.0.0.1:{_free_port()}/advisor"
    env = dict(os.environ, GPU_ADVISOR_HOME=str(tmp_path), GPU_ADVISOR_DATABASE_URL=url)
    done = subprocess.run(
        [str(script), "serve", "--port", str(_free_port())], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "PostgreSQL" in done.stderr and "127.0.0.1" in done.stderr
    assert "s3cret-pw" not in done.stderr and "Traceback" not in done.stderr
    env["GPU_ADVISOR_DATABASE_URL"] = "mysql://advisor@127.0.0.1/advisor"
    done = subprocess.run(
        [str(script), "serve", "--port", str(_free_port())], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "postgresql://" in done.stderr and "Traceback" not in done.stderr


def test_sqlite_buckets_are_shared_by_limiters_on_one_file_and_fail_open(tmp_path, caplog):
    import sqlite3

    from web.rate_limit.sqlite import SqliteTokenBucketLimiter

    path = tmp_path / "rate_limit.sqlite"
    workers = [SqliteTokenBucketLimiter(path, per_minute=1, burst=2) for _ in range(2)]
    outcomes = [workers[i % 2].acquire("203.0.113.7") for i in range(3)]
    assert outcomes[:2] == [None, None] and outcomes[2] is not None and 0 < outcomes[2] <= 60
    with sqlite3.connect(path) as connection:
        connection.execute("DROP TABLE buckets")  # storage broken under the running server
    assert workers[0].acquire("203.0.113.7") is None  # allowed, not a 500
    assert any("rate limit not applied" in record.getMessage() for record in caplog.records)
    for limiter in workers:
        limiter.close()
