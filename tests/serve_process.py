"""Test helpers: `gpu-advisor serve` as a real process (any number of workers), and racing follow-ups on threads."""

from __future__ import annotations

import itertools
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 90.0

FOLLOW_UPS: tuple[dict[str, Any], ...] = (
    {"epochs": 2},
    {"seq_len": 1024},
    {"micro_batch_size": 2},
    {"deadline_hours": 48},
    {"interruptible_ok": False},
    {"dataset_tokens": 50_000_000},
    {"precision": "bf16"},
)
"""Changes to distinct job fields: after all of them the thread's job must hold every one (none lost)."""
FIRST_MESSAGE = "LoRA fine-tune of Llama 3 8B"


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class ServeProcess:
    """A running `gpu-advisor serve` and its URL."""

    port: int
    env: dict[str, str]
    workers: int = 1
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        """Base URL."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ServeProcess:
        """Start the server and wait until /healthz says the advisor is loaded."""
        command = [
            sys.executable,
            "-c",
            "from cli.app import run; run()",
            "serve",
            "--port",
            str(self.port),
            "--workers",
            str(self.workers),
            "--json",
        ]
        self.process = subprocess.Popen(
            command,
            env=self.env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"serve exited: {self.process.stderr.read()[-3000:]}")
            try:
                if httpx2.get(f"{self.url}/healthz", timeout=2).json().get("advisor"):
                    return self
            except (httpx2.TransportError, ValueError):
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("serve did not become ready")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop the server (its whole process group) and wait for it."""
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, sig)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)


def serve_env(home: Path, **extra: str) -> dict[str, str]:
    """Environment for a test server: private data dir, no rate limit, no LLM, no Slack."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET")
    }
    env.update({"GPU_ADVISOR_HOME": str(home), "GPU_ADVISOR_RATE_PER_MINUTE": "0"}, **extra)
    return env


@dataclass
class LoadStats:
    """What a load run saw."""

    answered: int = 0
    """Turns answered (200)."""
    failovers: int = 0
    """Requests retried on the next server after a connection error or a 5xx."""


def continuing(result: dict[str, Any]) -> dict[str, str]:
    """The request fields that continue the thread of a chat result (its id and capability token)."""
    return {"thread_id": result["thread_id"], "thread_token": result["thread_token"]}


def chat(
    url: str | list[str], body: dict[str, Any], *, retries: int = 0, stats: LoadStats | None = None, start: int = 0
) -> dict[str, Any]:
    """POST /api/chat and return the JSON result; with several URLs (servers behind a balancer) a connection error or
    a 5xx is retried on the next one, up to `retries` times."""
    urls = [url] if isinstance(url, str) else url
    for attempt in range(retries + 1):
        target = urls[(start + attempt) % len(urls)]
        try:
            response = httpx2.post(f"{target}/api/chat", json=body, timeout=120)
            if response.status_code < 500 or attempt == retries:
                response.raise_for_status()
                if stats is not None:
                    stats.answered += 1
                return response.json()
        except httpx2.TransportError:
            if attempt == retries:
                raise
        if stats is not None:
            stats.failovers += 1
        time.sleep(0.2)
    raise AssertionError("unreachable")


def race_follow_ups(
    urls: list[str],
    threads: int,
    *,
    retries: int = 0,
    stats: LoadStats | None = None,
    on_answer: Callable[[int], None] | None = None,
) -> tuple[int, list[str]]:
    """Start `threads` conversations, send FOLLOW_UPS to each all at once (spread over `urls`), then one more turn;
    returns (turns answered, descriptions of threads whose job lost a change). `on_answer(n)` runs after the n-th
    follow-up is answered."""
    stats = stats if stats is not None else LoadStats()
    thread_ids = [
        continuing(chat(urls, {"message": FIRST_MESSAGE}, retries=retries, stats=stats, start=i))
        for i in range(threads)
    ]
    jobs = [(thread, change, i + j) for i, thread in enumerate(thread_ids) for j, change in enumerate(FOLLOW_UPS)]
    done = itertools.count(1)

    def follow_up(job: tuple[dict[str, str], dict[str, Any], int]) -> None:
        """One racing follow-up."""
        chat(urls, {"message": "", **job[0], "changes": job[1]}, retries=retries, stats=stats, start=job[2])
        if on_answer is not None:
            on_answer(next(done))

    with ThreadPoolExecutor(max_workers=len(FOLLOW_UPS) * 2) as pool:
        list(pool.map(follow_up, jobs))
    lost = []
    for i, thread in enumerate(thread_ids):
        spec = chat(
            urls,
            {"message": "", **thread, "changes": {"gradient_checkpointing": True}},
            retries=retries,
            stats=stats,
            start=i + 1,
        )["spec"]
        missing = [key for change in FOLLOW_UPS for key, value in change.items() if spec.get(key) != value]
        if missing or spec.get("method") != "lora":
            lost.append(f"{thread['thread_id']}: lost {missing}")
    return threads * (len(FOLLOW_UPS) + 2), lost
