"""Test helpers for the web tests: the real app under a real uvicorn on 127.0.0.1, and an SSE reader."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI

from web.app import create_app
from web.settings import ServerSettings


@dataclass(kw_only=True)
class RunningServer:
    """A started server: its base URL and the app (to reach its resources)."""

    url: str
    """http://127.0.0.1:<port>"""
    app: FastAPI
    """The app being served."""


@contextmanager
def serve(settings: ServerSettings, *, start_timeout_s: float = 60.0) -> Iterator[RunningServer]:
    """Run the real app (real Advisor) with uvicorn in a thread on a free port; stop it on exit."""
    app = create_app(settings)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + start_timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield RunningServer(url=f"http://127.0.0.1:{port}", app=app)
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def test_settings(tmp_path: Path, catalog: Path, **overrides: Any) -> ServerSettings:
    """Settings for a test server: checkpoints in tmp_path, the shared test catalog, generous limits."""
    values: dict[str, Any] = {
        "checkpoint_path": tmp_path / "threads.sqlite",
        "db_path": catalog,
        "rate_per_minute": 6000,
        "rate_burst": 1000,
    }
    values.update(overrides)
    return ServerSettings(**values)


test_settings.__test__ = False  # a helper, not a test


def parse_sse(text: str) -> list[tuple[str, Any]]:
    """(event, JSON data) pairs of an SSE body; comment lines (keep-alive pings) are skipped."""
    events: list[tuple[str, Any]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        name, data = "message", []
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
        if data:
            events.append((name, json.loads("\n".join(data))))
    return events


def without_thread(result: dict[str, Any]) -> dict[str, Any]:
    """A chat result minus its thread id and token, to compare two turns run in different threads."""
    return {k: v for k, v in result.items() if k not in ("thread_id", "thread_token")}


# ------------------------------------------------------------------------------------------------ browser tests

CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
"""Screenshots for people to look at (gitignored)."""


def chromium_path() -> str:
    """Debian's chromium (or GPU_ADVISOR_CHROMIUM); the browser tests never download a browser."""
    import os
    import shutil

    return os.environ.get("GPU_ADVISOR_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


def require_chromium() -> None:
    """Skip the calling test module (with the reason) when chromium is missing; in CI that is an error."""
    import os

    import pytest

    if not Path(chromium_path()).exists():
        if os.environ.get("CI"):
            raise RuntimeError(f"chromium not found at {chromium_path()}; .ci/run installs it with apt-get")
        pytest.skip("chromium is not installed (apt-get install chromium)", allow_module_level=True)


def serious_axe_violations(page: Any) -> list[str]:
    """axe-core's serious and critical violations on the page (open shadow roots included), one line each."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} -> {[n['target'] for n in v['nodes']][:3]}"
        for v in results.response["violations"]
        if v.get("impact") in ("serious", "critical")
    ]


def outside_box(inner: dict[str, float], outer: dict[str, float], slack: float = 0.5) -> bool:
    """Whether a bounding box sticks out of another (beyond `slack` pixels)."""
    return (
        inner["x"] < outer["x"] - slack
        or inner["y"] < outer["y"] - slack
        or inner["x"] + inner["width"] > outer["x"] + outer["width"] + slack
        or inner["y"] + inner["height"] > outer["y"] + outer["height"] + slack
    )
