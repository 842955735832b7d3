"""A local OpenAI-compatible server that answers like a very small model (the audit's SmolLM2-135M classes).

Every request gets one output class, picked from the request's kind and a hash of its last user message (so a run
is reproducible and every class is exercised across a set): the parse (response_format) gets prose, nothing,
invented numbers, fields the message never states or cut JSON; the phrasing (a stream) gets nothing, a paragraph
about "the company", a paragraph in another language, the draft with its numbers changed, the draft with its
verdict flipped, the draft cut by the length limit, or the draft itself (faithful); the tool agent gets plain text
instead of a tool call, a tool call with broken arguments and then invented figures, or a real tool call and then
figures on the wrong provider. Every reply is logged with its class, so the grader can tell whether a user saw it.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PARSE = ("prose", "empty", "invented_numbers", "unstated_fields", "cut_json")
PHRASE = ("empty", "the_company", "wrong_language", "wrong_numbers", "flipped_verdict", "cut_by_length", "faithful")
TOOLS = ("plain_text", "broken_arguments", "wrong_provider")
OTHER_LANGUAGE = {
    "Italian": "The best option is to rent a big GPU from the company, which is always the cheapest.",
    "Indonesian": "The best option is to rent a big GPU from the company, which is always the cheapest.",
    "English": ("La soluzione migliore è noleggiare una GPU grande dall'azienda, sempre la più economica."),
}
FLIPS = {
    "Sì": "No",
    "No": "Sì",
    "Yes": "No",
    "Ya": "Tidak",
    "Tidak": "Ya",
    "rientra": "non rientra",
    "within": "over",
    "dalam anggaran": "melebihi anggaran",
}


def _pick(classes: tuple[str, ...], kind: str, text: str) -> str:
    """The class for a request: a stable hash of its kind and last user message."""
    digest = hashlib.sha256(f"{kind}\n{text}".encode()).digest()
    return classes[digest[0] % len(classes)]


def _changed_numbers(draft: str) -> str:
    """The draft with every number doubled (a model copying the text but not its figures)."""
    return re.sub(r"\d+(?:[.,]\d+)?", lambda m: str(int(float(m[0].replace(",", "."))) * 2 + 1), draft)


def _flipped(draft: str) -> str:
    """The draft with its verdict turned round (the first verdict word swapped, or a 'No' put first)."""
    for word, other in FLIPS.items():
        if re.search(rf"\b{re.escape(word)}\b", draft):
            return re.sub(rf"\b{re.escape(word)}\b", other, draft, count=1)
    return "No — " + draft


def phrase_reply(kind: str, draft: str, language_name: str) -> tuple[str, bool]:
    """The text of a phrasing reply of class `kind`, and whether the stream is cut by the length limit."""
    if kind == "empty":
        return "", False
    if kind == "the_company":
        return (
            "The company is a leading provider of cloud services. It offers many options for customers who "
            "want to train their models quickly and cheaply."
        ), False
    if kind == "wrong_language":
        return OTHER_LANGUAGE.get(language_name, OTHER_LANGUAGE["English"]), False
    if kind == "wrong_numbers":
        return _changed_numbers(draft), False
    if kind == "flipped_verdict":
        return _flipped(draft), False
    if kind == "cut_by_length":
        return draft[: len(draft) // 2].rsplit(" ", 1)[0], True
    return draft, False


def parse_reply(kind: str) -> str:
    """The content of a parse reply of class `kind`."""
    return {
        "prose": "The user wants to train a model on GPUs. The company can help with that.",
        "empty": "",
        "invented_numbers": json.dumps(
            {
                "seq_len": 8192,
                "budget": {"amount": 2, "currency": "EUR"},
                "num_gpus": 64,
                "dataset_tokens": 1000000,
                "epochs": 7,
            }
        ),
        "unstated_fields": json.dumps(
            {
                "method": "pretrain",
                "model": "gpt-4",
                "providers": ["the company"],
                "interruptible_ok": True,
                "deadline_hours": 1,
            }
        ),
        "cut_json": '```json\n{"method": "lora", "model": "llama',
    }[kind]


class ReplayServer(ThreadingHTTPServer):
    """The replaying server; `log` holds (request kind, class, reply text, the request's last user message) for every
    answer, in order (for a phrasing call that message is the draft it rewords)."""

    daemon_threads = True
    block_on_close = False

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.log: list[tuple[str, str, str, str]] = []
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        """The /v1 root the openai client talks to."""
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def record(self, kind: str, klass: str, text: str, user: str = "") -> None:
        """Log one reply."""
        with self.lock:
            self.log.append((kind, klass, text, user))


def _completion(message: dict[str, Any], finish: str) -> bytes:
    """A chat.completion body."""
    return json.dumps(
        {
            "id": "chatcmpl-replay",
            "object": "chat.completion",
            "created": 0,
            "model": "smollm2-135m",
            "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    ).encode()


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    """One SSE event of a stream."""
    body = {
        "id": "chatcmpl-replay",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "smollm2-135m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body)}\n\n".encode()


class _Handler(BaseHTTPRequestHandler):
    server: ReplayServer

    def do_POST(self) -> None:
        """Answer one chat-completions request in its class."""
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        messages = body.get("messages") or []
        user = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
        system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
        language = next((name for name in OTHER_LANGUAGE if f"in {name}" in system), "English")
        try:
            if body.get("max_tokens") == 1:
                self._json(_completion({"content": "ok"}, "length"))
            elif body.get("response_format"):
                klass = _pick(PARSE, "parse", user)
                text = parse_reply(klass)
                self.server.record("parse", klass, text, user)
                self._json(_completion({"content": text}, "stop"))
            elif body.get("tools"):
                self._tools(messages, user)
            elif body.get("stream"):
                klass = _pick(PHRASE, "phrase", user)
                text, cut = phrase_reply(klass, user, language)
                self.server.record("phrase", klass, text, user)
                self._stream(text, "length" if cut else "stop")
            else:
                klass = _pick(PHRASE, "other", user)
                text, cut = phrase_reply(klass, user, language)
                self.server.record("other", klass, text, user)
                self._json(_completion({"content": text}, "length" if cut else "stop"))
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _tools(self, messages: list[dict[str, Any]], user: str) -> None:
        """The tool agent's rounds: a first answer by class, then figures the tools did not give."""
        klass = _pick(TOOLS, "tools", user)
        if any(m.get("role") == "tool" for m in messages):
            text = {
                "broken_arguments": "Lambda bills every 30 seconds and has spot with a 10 minute notice.",
                "wrong_provider": "Lambda bills per second (1 s granularity); aws bills per minute.",
            }.get(klass, "The company bills per second.")
            self.server.record("tools_answer", klass, text)
            self._json(_completion({"content": text}, "stop"))
            return
        if klass == "plain_text":
            text = "You can use the tools to find the best provider: the company bills per second and never fails."
            self.server.record("tools", klass, text)
            self._json(_completion({"content": text}, "stop"))
            return
        arguments = "{provider: lambda" if klass == "broken_arguments" else "{}"
        call = {"id": "call_0", "type": "function", "function": {"name": "provider_info", "arguments": arguments}}
        self.server.record("tools", klass, "")
        self._json(_completion({"content": None, "tool_calls": [call]}, "tool_calls"))

    def _stream(self, text: str, finish: str) -> None:
        """The text as SSE chunks, word by word, then the finish chunk and [DONE]."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(_chunk({"role": "assistant", "content": ""}))
        for word in re.findall(r"\S+\s*", text):
            self.wfile.write(_chunk({"content": word}))
        self.wfile.write(_chunk({}, finish) + b"data: [DONE]\n\n")

    def _json(self, data: bytes) -> None:
        """A 200 JSON response."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        """Quiet."""


@contextmanager
def running() -> Iterator[ReplayServer]:
    """A replay server on a free loopback port for the duration of the block."""
    server = ReplayServer()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
