"""Test helpers for the Slack bot: Slack's Web API and response_url as a small local HTTP server speaking Slack's
wire format, a real uvicorn server on 127.0.0.1, request signing (real HMAC-SHA256), and payload builders."""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import uvicorn

SIGNING_SECRET = "test-signing-secret-8c1f0e"
BOT_TOKEN = "xoxb-test-bot-token-5d2a"
APP_TOKEN = "xapp-test-app-token-77b1"
BOT_USER = "U0BOT"
TEAM = "T0TEAM"


@dataclass
class Call:
    """One request the fake Slack received."""

    method: str
    """Web API method ('chat.postMessage') or 'response_url'."""
    path: str
    body: dict[str, Any]
    headers: dict[str, str]


@dataclass
class FakeSlack:
    """Slack's Web API (chat.postMessage, chat.update, users.info, auth.test, apps.connections.open) and
    response_url endpoints on 127.0.0.1, recording every call."""

    calls: list[Call] = field(default_factory=list)
    locales: dict[str, str] = field(default_factory=dict)
    reject_tables: bool = False
    socket_url: str = ""
    port: int = 0
    _ts: int = 0
    _cond: threading.Condition = field(default_factory=threading.Condition)

    @property
    def url(self) -> str:
        """Base URL of the Web API (what WebClient's base_url takes)."""
        return f"http://127.0.0.1:{self.port}/api/"

    def response_url(self, name: str) -> str:
        """A response_url that this server answers."""
        return f"http://127.0.0.1:{self.port}/response/{name}"

    def record(self, call: Call) -> None:
        """Store a call and wake waiters."""
        with self._cond:
            self.calls.append(call)
            self._cond.notify_all()

    def next_ts(self) -> str:
        """A fresh message ts."""
        with self._cond:
            self._ts += 1
            return f"1700000000.{self._ts:06d}"

    def wait_for(self, predicate: Callable[[list[Call]], bool], timeout: float = 20.0) -> list[Call]:
        """Block until predicate(calls) holds; AssertionError with the calls seen on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate(self.calls):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out; calls: {[(c.method, c.body.get('channel')) for c in self.calls]}")
                self._cond.wait(left)
            return list(self.calls)

    def to(self, method: str, channel: str | None = None, path: str | None = None) -> list[Call]:
        """Calls of one method (and channel / response path)."""
        with self._cond:
            return [
                c
                for c in self.calls
                if c.method == method
                and (channel is None or c.body.get("channel") == channel)
                and (path is None or c.path == path)
            ]


def _handler(fake: FakeSlack) -> type[BaseHTTPRequestHandler]:
    """The request handler class bound to one FakeSlack."""

    class Handler(BaseHTTPRequestHandler):
        """Answers like Slack: JSON {'ok': ...} for the Web API, 'ok' text for response_url."""

        def log_message(self, *args: Any) -> None:
            """Keep test output quiet."""

        def _body(self) -> dict[str, Any]:
            """Request parameters from JSON, a form, or the query string."""
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length).decode() if length else ""
            query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
            if "json" in (self.headers.get("content-type") or ""):
                return {**query, **(json.loads(raw) if raw else {})}
            form = dict(urllib.parse.parse_qsl(raw))
            for key in ("blocks",):
                if isinstance(form.get(key), str):
                    form[key] = json.loads(form[key])
            return {**query, **form}

        def _send(self, status: int, payload: Any) -> None:
            """Write a JSON (or text) response."""
            data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "text/plain" if isinstance(payload, str) else "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _handle(self) -> None:
            """Record the call and answer it."""
            path = urllib.parse.urlsplit(self.path).path
            body = self._body()
            headers = {k.lower(): v for k, v in self.headers.items()}
            has_table = any(b.get("type") == "table" for b in body.get("blocks") or [] if isinstance(b, dict))
            if path.startswith("/response/"):
                fake.record(Call("response_url", path, body, headers))
                if fake.reject_tables and has_table:
                    return self._send(400, "invalid_blocks")
                return self._send(200, "ok")
            method = path.removeprefix("/api/")
            fake.record(Call(method, path, body, headers))
            if headers.get("authorization") not in (f"Bearer {BOT_TOKEN}", f"Bearer {APP_TOKEN}"):
                return self._send(200, {"ok": False, "error": "not_authed"})
            if method in ("chat.postMessage", "chat.update"):
                if fake.reject_tables and has_table:
                    return self._send(200, {"ok": False, "error": "invalid_blocks"})
                ts = body.get("ts") or fake.next_ts()
                return self._send(
                    200,
                    {
                        "ok": True,
                        "channel": body.get("channel"),
                        "ts": ts,
                        "message": {"text": body.get("text"), "ts": ts},
                    },
                )
            if method == "users.info":
                locale = fake.locales.get(body.get("user", ""))
                if locale is None:
                    return self._send(200, {"ok": False, "error": "user_not_found"})
                return self._send(200, {"ok": True, "user": {"id": body["user"], "locale": locale}})
            if method == "auth.test":
                return self._send(
                    200,
                    {
                        "ok": True,
                        "team_id": TEAM,
                        "user_id": BOT_USER,
                        "bot_id": "B0BOT",
                        "url": "https://example.invalid/",
                        "team": "Test",
                    },
                )
            if method == "apps.connections.open":
                return self._send(200, {"ok": True, "url": fake.socket_url})
            return self._send(200, {"ok": False, "error": "unknown_method"})

        do_GET = do_POST = _handle

    return Handler


@contextmanager
def fake_slack() -> Iterator[FakeSlack]:
    """A running FakeSlack on a free port."""
    fake = FakeSlack()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    fake.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def offline_advisor(home: Path) -> Iterator[Any]:
    """The real Advisor with its files under `home` and no LLM configured (deterministic offline answers)."""
    from agent.service import Advisor

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GPU_ADVISOR_HOME", str(home))
        for name in (
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "GPU_ADVISOR_MODEL",
            "SLACK_BOT_TOKEN",
            "SLACK_SIGNING_SECRET",
            "SLACK_APP_TOKEN",
        ):
            patch.delenv(name, raising=False)
        advisor = Advisor(checkpoint_path=home / "threads.sqlite")
        try:
            yield advisor
        finally:
            advisor.close()


@contextmanager
def serve(app: Any, lifespan: str = "off") -> Iterator[str]:
    """Serve an ASGI app with real uvicorn on 127.0.0.1; yields its base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan=lifespan))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def signature(body: str, timestamp: str, secret: str = SIGNING_SECRET) -> str:
    """Slack's v0 request signature: HMAC-SHA256 of 'v0:<timestamp>:<body>' with the signing secret."""
    digest = hmac.new(secret.encode(), f"v0:{timestamp}:{body}".encode(), hashlib.sha256).hexdigest()
    return f"v0={digest}"


def signed_headers(
    body: str,
    *,
    content_type: str,
    timestamp: int | None = None,
    secret: str = SIGNING_SECRET,
    retry: int | None = None,
) -> dict[str, str]:
    """Headers of a request from Slack, signed now (or at `timestamp`)."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    headers = {
        "content-type": content_type,
        "x-slack-request-timestamp": ts,
        "x-slack-signature": signature(body, ts, secret),
    }
    if retry is not None:
        headers.update({"x-slack-retry-num": str(retry), "x-slack-retry-reason": "http_timeout"})
    return headers


def event_body(event: dict[str, Any], event_id: str) -> str:
    """An Events API callback envelope as JSON text."""
    return json.dumps(
        {
            "token": "unused",
            "team_id": TEAM,
            "api_app_id": "A0APP",
            "type": "event_callback",
            "event_id": event_id,
            "event_time": int(time.time()),
            "event": event,
            "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}],
        }
    )


def mention(text: str, *, channel: str, ts: str, user: str = "U0ALICE", thread_ts: str | None = None) -> dict:
    """An app_mention event."""
    event = {
        "type": "app_mention",
        "user": user,
        "text": f"<@{BOT_USER}> {text}".rstrip(),
        "ts": ts,
        "channel": channel,
        "event_ts": ts,
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


def message(
    text: str,
    *,
    channel: str,
    ts: str,
    user: str = "U0ALICE",
    thread_ts: str | None = None,
    channel_type: str = "channel",
) -> dict:
    """A message event (DM when channel_type is 'im')."""
    event = {
        "type": "message",
        "user": user,
        "text": text,
        "ts": ts,
        "channel": channel,
        "event_ts": ts,
        "channel_type": channel_type,
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


def command_body(text: str, *, response_url: str, channel: str = "C0CMD", user: str = "U0ALICE") -> str:
    """A /gpu slash command as Slack posts it (form-encoded)."""
    return urllib.parse.urlencode(
        {
            "token": "unused",
            "team_id": TEAM,
            "channel_id": channel,
            "user_id": user,
            "command": "/gpu",
            "text": text,
            "response_url": response_url,
            "trigger_id": "1.2.3",
            "api_app_id": "A0APP",
        }
    )


def action_body(
    action_id: str,
    value: str,
    *,
    channel: str,
    message_ts: str,
    response_url: str,
    thread_ts: str | None = None,
    ephemeral: bool = False,
    blocks: list | None = None,
) -> str:
    """A block_actions interaction (form-encoded 'payload'); `blocks` is the clicked message's content."""
    msg = {
        "type": "message",
        "ts": message_ts,
        "text": "…",
        "user": BOT_USER,
        "bot_id": "B0BOT",
        "blocks": blocks or [],
    }
    if thread_ts:
        msg["thread_ts"] = thread_ts
    payload = {
        "type": "block_actions",
        "team": {"id": TEAM},
        "user": {"id": "U0ALICE"},
        "api_app_id": "A0APP",
        "trigger_id": "1.2.3",
        "response_url": response_url,
        "container": {"type": "message", "message_ts": message_ts, "channel_id": channel, "is_ephemeral": ephemeral},
        "channel": {"id": channel},
        "message": msg,
        "actions": [
            {
                "type": "button",
                "action_id": action_id,
                "block_id": "gpu_rerun",
                "value": value,
                "action_ts": str(time.time()),
            }
        ],
    }
    return urllib.parse.urlencode({"payload": json.dumps(payload)})
