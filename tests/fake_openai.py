"""A local HTTP server speaking the OpenAI chat-completions wire format (JSON and streamed SSE), for LLM-path tests."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

WIRE_DIR = Path(__file__).with_name("data") / "llm_wire"
ECHO = "$ECHO_USER"
"""In a recorded body, the last user message of the request (the draft a phrasing call rewords)."""
ECHO_HALF = "$ECHO_USER_HALF"
"""Its first half, cut at a word (a reply stopped by max_tokens)."""


@dataclass(frozen=True)
class Recorded:
    """One HTTP response in a real server's wire format (tests/data/llm_wire/<server>/<case>.json): status, content
    type, and a body (JSON or raw text) or a list of SSE `data:` events; every file says what it imitates."""

    name: str
    status: int
    content_type: str
    body: str | None = None
    events: tuple[Any, ...] = ()
    imitates: str = ""


def recorded(name: str) -> Recorded:
    """The recorded response `name` ("vllm/tool_call") from tests/data/llm_wire."""
    data = json.loads((WIRE_DIR / f"{name}.json").read_text(encoding="utf-8"))
    body = data.get("body")
    text = json.dumps(body) if isinstance(body, (dict, list)) else body
    return Recorded(
        name=name,
        status=data["status"],
        content_type=data["content_type"],
        body=text,
        events=tuple(data.get("events") or ()),
        imitates=data["imitates"],
    )


def _last_user(request: dict[str, Any]) -> str:
    """The content of the request's last user message."""
    users = [m.get("content") or "" for m in request.get("messages", []) if m.get("role") == "user"]
    return users[-1] if users else ""


def _echoed(text: str, request: dict[str, Any]) -> str:
    """`text` with the echo markers replaced by the request's last user message (JSON-escaped)."""
    user = _last_user(request)
    half = user[: len(user) // 2].rsplit(" ", 1)[0]
    return text.replace(ECHO_HALF, json.dumps(half)[1:-1]).replace(ECHO, json.dumps(user)[1:-1])


def _expand(event: Any, request: dict[str, Any]) -> list[str]:
    """One recorded SSE event as the `data:` payloads to send; a delta whose content is an echo marker becomes one
    event per word of the echoed text, in the recorded event's framing."""
    if isinstance(event, str):
        return [event]
    choices = event.get("choices") or []
    content = (choices[0].get("delta") or {}).get("content") if choices else None
    if content not in (ECHO, ECHO_HALF):
        return [json.dumps(event)]
    user = _last_user(request)
    text = user if content == ECHO else user[: len(user) // 2].rsplit(" ", 1)[0]
    words = text.split(" ")
    out = []
    for index, word in enumerate(words):
        piece = word + (" " if index < len(words) - 1 else "")
        choice = {**choices[0], "delta": {**choices[0]["delta"], "content": piece}}
        out.append(json.dumps({**event, "choices": [choice]}))
    return out


class FakeOpenAI(ThreadingHTTPServer):
    """Answers POST /v1/chat/completions from a queue of (status, content, delay_s, chunk_delay_s); records requests.

    `content` is the assistant's text (wrapped in a chat.completion, or streamed word by word when the request asks
    for a stream, `chunk_delay_s` apart), a dict sent verbatim as the JSON body (error bodies, hand-built
    completions such as `tool_calls(...)`), or a `Recorded` response in a real server's wire format. With
    `default` set, an empty queue answers that instead of HTTP 500."""

    daemon_threads = True
    block_on_close = False

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answers: list[tuple[int, Any, float, float]] = []
        self.requests: list[dict[str, Any]] = []
        self.default: tuple[int, Any, float, float] | None = None
        self.check: Callable[[dict[str, Any]], tuple[int, Any] | None] | None = None
        """A server's own rules: (status, body) to answer a request with instead of the queue (see test_llm_wire)."""
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        """The /v1 root the openai client talks to."""
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def reply(self, content: Any, *, status: int = 200, delay_s: float = 0.0, chunk_delay_s: float = 0.0) -> None:
        """Queue one answer: message text, or a raw JSON body (a dict) sent as it is."""
        with self.lock:
            self.answers.append((status, content, delay_s, chunk_delay_s))

    def next_answer(self) -> tuple[int, Any, float, float]:
        """The next queued answer, else the default, else an HTTP 500."""
        with self.lock:
            if self.answers:
                answer = tuple(self.answers.pop(0))
                return answer + (0.0,) * (4 - len(answer))  # type: ignore[return-value]
        return self.default or (500, {"error": {}}, 0.0, 0.0)


def tool_calls(*calls: tuple[str, Any], content: str | None = None) -> dict[str, Any]:
    """A chat.completion whose assistant message calls tools: (name, arguments dict or raw JSON string) pairs."""
    items = [
        {
            "id": f"call_{index}",
            "type": "function",
            "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
        }
        for index, (name, args) in enumerate(calls)
    ]
    message = {"role": "assistant", "content": content, "refusal": None, "tool_calls": items}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "test-model",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _chunk(content: str | None, finish: str | None = None) -> bytes:
    """One streamed chat.completion.chunk event."""
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "test-model",
        "choices": [
            {"index": 0, "delta": {"content": content} if content is not None else {}, "finish_reason": finish}
        ],
    }
    return f"data: {json.dumps(body)}\n\n".encode()


class _Handler(BaseHTTPRequestHandler):
    server: FakeOpenAI

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            self.server.requests.append({"path": self.path, **body})
        rejected = self.server.check(body) if self.server.check else None
        if rejected:
            self._send(rejected[0], "application/json", json.dumps(rejected[1]).encode())
            return
        status, content, delay, chunk_delay = self.server.next_answer()
        time.sleep(delay)
        try:
            if isinstance(content, Recorded):
                self._send_recorded(content, body)
            elif status != 200 or isinstance(content, dict):
                self._send(status, "application/json", json.dumps(content).encode())
            elif body.get("stream"):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                words = str(content).split(" ")
                for index, word in enumerate(words):
                    self.wfile.write(_chunk(word + (" " if index < len(words) - 1 else "")))
                    self.wfile.flush()
                    time.sleep(chunk_delay)
                self.wfile.write(_chunk(None, "stop") + b"data: [DONE]\n\n")
            else:
                message = {"role": "assistant", "content": content, "refusal": None}
                answer = {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "test-model",
                    "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
                self._send(200, "application/json", json.dumps(answer).encode())
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _send_recorded(self, answer: Recorded, request: dict[str, Any]) -> None:
        """A recorded response: its body (echo markers filled in) or its SSE events, then the stream's end."""
        if not answer.events:
            self._send(answer.status, answer.content_type, _echoed(answer.body or "", request).encode())
            return
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        self.end_headers()
        for event in answer.events:
            for payload in _expand(event, request):
                self.wfile.write(f"data: {payload}\n\n".encode())
                self.wfile.flush()

    def _send(self, status: int, content_type: str, data: bytes) -> None:
        """A complete response with a body."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        """Keep test output quiet."""


@contextmanager
def running() -> Iterator[FakeOpenAI]:
    """Start a FakeOpenAI on a free loopback port for the duration of the block."""
    fake = FakeOpenAI()
    thread = threading.Thread(target=fake.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        fake.shutdown()
        fake.server_close()


@contextmanager
def configured(monkeypatch: Any, *, api_key: str, model: str) -> Iterator[FakeOpenAI]:
    """A running FakeOpenAI the product is configured to use (5 s budget, long cool-down), the breaker closed
    before and after."""
    from agent.llm import client as llm

    with running() as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", api_key)
        monkeypatch.setenv("GPU_ADVISOR_MODEL", model)
        monkeypatch.setenv("GPU_ADVISOR_LLM_TIMEOUT_S", "5")
        monkeypatch.setenv("GPU_ADVISOR_LLM_COOLDOWN_S", "600")
        monkeypatch.delenv("GPU_ADVISOR_OFFLINE", raising=False)
        llm.breaker.reset()
        try:
            yield fake
        finally:
            llm.breaker.reset()


def offline_answers(catalog: Path, threads: Path, messages: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """What each message gets with no LLM configured: the baseline a failing LLM must fall back to."""
    import pytest

    from agent.service import Advisor

    with pytest.MonkeyPatch.context() as patch:
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
            patch.delenv(name, raising=False)
        advisor = Advisor(checkpoint_path=threads, db_path=catalog)
        try:
            return {message: advisor.respond(message) for message in messages}
        finally:
            advisor.close()
