"""Record real LLM-server responses to the product's real requests, for tests/test_llm_recorded.py (issue 29).

A recording proxy (standard library) listens on 127.0.0.1, forwards every request to the real server at
--upstream, and saves each request/response pair in the tests/data/llm_wire/*.json format (status, content type,
the headers that matter, the body, or a stream's `data:` payloads exactly as they came). The product's turns are
driven through it in-process (the Advisor with OPENAI_BASE_URL at the proxy), then a few raw requests provoke the
server's own errors. Reproduce (see tests/data/llm_wire/README.md for how the server was started):

    python tests/data/llm_wire/record.py --upstream http://127.0.0.1:8090 --out tests/data/llm_wire/llama_cpp_recorded \
        --server "llama-cpp-python 0.3.36" --model smollm2-135m --model-file SmolLM2-135M-Instruct.Q4_1.gguf \
        --server-command "python -m llama_cpp.server --model ... --n_ctx 5300 --chat_format chatml-function-calling" \
        --prefix fc
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import http.client
import json
import os
import sys
import tempfile
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

LONG = 20_000
KEPT_HEADERS = ("content-type", "content-length", "transfer-encoding", "server", "x-request-id")


def kind_of(request: dict[str, Any]) -> str:
    """Which of the product's requests this is, from its body."""
    if request.get("max_tokens") == 1 and len(request.get("messages") or []) == 1:
        return "breaker_trial"
    if request.get("tools"):
        return "tool_agent"
    if request.get("stream"):
        return "phrasing_stream"
    mode = (request.get("response_format") or {}).get("type")
    return {"json_schema": "parse_json_schema", "json_object": "parse_json_object"}.get(mode or "", "plain")


class Proxy(ThreadingHTTPServer):
    """Forwards to `upstream` and keeps (label, request, response) for every exchange."""

    daemon_threads = True

    def __init__(self, upstream: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.upstream = urllib.parse.urlsplit(upstream)
        self.label = "unlabelled"
        self.exchanges: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        """The /v1 root for the product."""
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: Proxy
    protocol_version = "HTTP/1.1"

    def _forward(self, method: str) -> None:
        label = self.server.label
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        up = http.client.HTTPConnection(self.server.upstream.hostname, self.server.upstream.port, timeout=600)
        headers = {"Content-Type": self.headers.get("Content-Type") or "application/json"}
        if self.headers.get("Authorization"):
            headers["Authorization"] = self.headers["Authorization"]
        up.request(method, self.path, body=raw or None, headers=headers)
        answer = up.getresponse()
        kept = {k.lower(): v for k, v in answer.getheaders() if k.lower() in KEPT_HEADERS}
        streaming = "text/event-stream" in (answer.getheader("Content-Type") or "")
        self.send_response(answer.status)
        for key, value in answer.getheaders():
            if key.lower() not in ("transfer-encoding", "content-length", "connection", "date", "server"):
                self.send_header(key, value)
        self.send_header("Connection", "close")
        chunks: list[bytes] = []
        if streaming:
            self.end_headers()
            while True:
                line = answer.readline()
                if not line:
                    break
                chunks.append(line)
                with contextlib.suppress(OSError):  # the product stopped reading: keep the whole stream
                    self.wfile.write(line)
                    self.wfile.flush()
        else:
            data = answer.read()
            chunks.append(data)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            with contextlib.suppress(OSError):  # the product gave up waiting (its deadline): keep what the server said
                self.wfile.write(data)
        up.close()
        try:
            request: Any = json.loads(raw) if raw else None
        except ValueError:
            request = raw.decode("utf-8", "replace")
        with self.server.lock:
            self.server.exchanges.append(
                {
                    "label": label,
                    "path": self.path,
                    "method": method,
                    "request": request,
                    "status": answer.status,
                    "headers": kept,
                    "raw": b"".join(chunks).decode("utf-8", "replace"),
                    "streaming": streaming,
                }
            )

    def do_POST(self) -> None:
        self._forward("POST")

    def do_GET(self) -> None:
        self._forward("GET")

    def log_message(self, *args: object) -> None:
        """Quiet."""


def events_of(raw: str) -> list[str]:
    """A stream's `data:` payloads, exactly as sent (framing lines and comments dropped)."""
    return [line[len("data: ") :].rstrip("\r\n") for line in raw.splitlines(True) if line.startswith("data: ")]


def shortened(request: Any) -> Any:
    """The request as saved: a message longer than LONG characters (the over-the-context prompt) is cut, saying so."""
    if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
        return request
    messages = []
    for message in request["messages"]:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str) and len(content) > LONG:
            message = {**message, "content": content[:200] + f" [... cut here: {len(content)} characters sent]"}
        messages.append(message)
    return {**request, "messages": messages}


def to_file(exchange: dict[str, Any], meta: dict[str, Any], answers: str) -> dict[str, Any]:
    """One exchange in the tests/data/llm_wire format, with where and how it was recorded."""
    out: dict[str, Any] = {
        "imitates": meta["server"] + " (recorded live, not imitated)",
        "documented": ["https://llama-cpp-python.readthedocs.io/en/latest/server/", "tests/data/llm_wire/README.md"],
        "how": "recorded from a live server by tests/data/llm_wire/record.py (a proxy between the product and it)",
        "recorded": {
            "server": meta["server"],
            "model": meta["model_file"],
            "model_name_sent": meta["model"],
            "server_command": meta["server_command"],
            "record_command": meta["record_command"],
            "date": meta["date"],
        },
        "answers": answers,
        "request": {"path": exchange["path"], "body": shortened(exchange["request"])},
        "status": exchange["status"],
        "content_type": exchange["headers"].get("content-type", ""),
        "headers": exchange["headers"],
    }
    if exchange["streaming"]:
        out["events"] = events_of(exchange["raw"])
        out["raw_stream"] = exchange["raw"]
    else:
        try:
            out["body"] = json.loads(exchange["raw"])
        except ValueError:
            out["body"] = exchange["raw"]
    return out


def drive_product(proxy: Proxy, model: str, workdir: Path) -> None:
    """The product's real requests: a job turn (parse, phrasing), a tool question (tool agent), a breaker trial."""
    os.environ.update(
        OPENAI_BASE_URL=proxy.base_url,
        OPENAI_API_KEY="x",
        GPU_ADVISOR_MODEL=model,
        GPU_ADVISOR_LLM_TIMEOUT_S="120",
        GPU_ADVISOR_LLM_COOLDOWN_S="0",
    )
    os.environ.pop("GPU_ADVISOR_OFFLINE", None)
    from agent.llm import client as llm
    from agent.service import Advisor
    from tools.catalog import ensure_db

    advisor = Advisor(checkpoint_path=workdir / "t.sqlite", db_path=ensure_db(workdir / "catalog.sqlite"))
    try:
        for label, message in (
            ("job_it", "QLoRA su Llama 3.1 8B, 20M token, budget 50 euro"),
            ("tool_question", "what if I rent on vast vs runpod for a week of idle time?"),
        ):
            proxy.label = label
            result = advisor.respond(message)
            print(label, "->", result.get("parser"), json.dumps(result.get("notes")), file=sys.stderr)
        proxy.label = "breaker_trial"
        llm.breaker.reset()
        for _ in range(3):
            llm.breaker.failure()
        llm.call(lambda client: client.models.list())  # the trial goes first, then this one GET
    finally:
        advisor.close()


def raw_requests(proxy: Proxy, model: str) -> None:
    """Requests that provoke the server's own errors: unknown model, a prompt over the context, malformed bodies."""
    cases = {
        "unknown_model": {"model": "no-such-model", "messages": [{"role": "user", "content": "ping"}], "max_tokens": 1},
        "context_exceeded": {
            "model": model,
            "messages": [{"role": "user", "content": "GPU " * 40_000}],
            "max_tokens": 1,
        },
        "malformed_messages": {"model": model, "messages": "not a list"},
        "malformed_json": "{not json",
    }
    for label, body in cases.items():
        proxy.label = label
        conn = http.client.HTTPConnection("127.0.0.1", proxy.server_address[1], timeout=600)
        data = body if isinstance(body, str) else json.dumps(body)
        conn.request("POST", "/v1/chat/completions", body=data, headers={"Content-Type": "application/json"})
        answer = conn.getresponse()
        print(label, "->", answer.status, answer.read()[:200], file=sys.stderr)
        conn.close()


def main() -> None:
    """Record, then write one file per exchange into --out."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--server", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--model-file", required=True)
    parser.add_argument("--server-command", required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--skip-errors", action="store_true")
    args = parser.parse_args()
    proxy = Proxy(args.upstream)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as work:
        drive_product(proxy, args.model, Path(work))
    if not args.skip_errors:
        raw_requests(proxy, args.model)
    proxy.shutdown()
    meta = {
        "server": args.server,
        "model": args.model,
        "model_file": args.model_file,
        "server_command": args.server_command,
        "record_command": "python " + " ".join(sys.argv),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    for index, exchange in enumerate(proxy.exchanges):
        kind = kind_of(exchange["request"]) if isinstance(exchange["request"], dict) else "raw"
        name = f"{args.prefix}_{index:02d}_{exchange['label']}_{kind}"
        answers = f"{exchange['label']}: the product's {kind} request ({exchange['method']} {exchange['path']})"
        path = args.out / f"{name}.json"
        path.write_text(json.dumps(to_file(exchange, meta, answers), indent=1, ensure_ascii=False) + "\n", "utf-8")
        print(path, exchange["status"], file=sys.stderr)


if __name__ == "__main__":
    main()
