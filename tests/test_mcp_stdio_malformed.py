"""`gpu-advisor mcp` over stdio, driven as a real subprocess through raw stdin/stdout lines: every malformed
message (bad JSON, wrong jsonrpc, no method, wrong types, batches, odd ids, unknown method) gets a JSON-RPC error
response, so no client waits forever, and the server keeps answering well-formed requests afterwards."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
from pathlib import Path

import pytest

from tools.catalog import ensure_db

GPU_ADVISOR = Path(sys.executable).with_name("gpu-advisor")
NO_ANSWER_S = 30  # a deadlock guard, not a speed target: the answer normally comes at once
HUGE = int("9" * 400)
# (line sent, the id the error must carry, the JSON-RPC error codes accepted)
MALFORMED = [
    ("{not json", None, {-32700}),
    ('{"jsonrpc": "2.0", "id": 1, "method": "tools/list"', None, {-32700}),
    ("\u00ff\u00fe garbage", None, {-32700}),
    ("\udcff\udcfe{}", None, {-32700}),  # bytes that are not UTF-8
    (json.dumps({"jsonrpc": "1.0", "id": 2, "method": "tools/list"}), 2, {-32600}),
    (json.dumps({"id": 3, "method": "tools/list"}), 3, {-32600}),
    (json.dumps({"jsonrpc": "2.0", "id": 4}), 4, {-32600}),
    (json.dumps({"jsonrpc": "2.0", "id": 5, "method": 5}), 5, {-32600}),
    (json.dumps({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": "x"}), 6, {-32602}),
    (json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": [1]}), 7, {-32602}),
    (json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": 5}}), 8, {-32602}),
    (json.dumps({"jsonrpc": "2.0", "id": 9, "method": "no/such/method"}), 9, {-32601}),
    (json.dumps([{"jsonrpc": "2.0", "id": 10, "method": "tools/list"}]), None, {-32600}),
    (json.dumps([]), None, {-32600}),
    (json.dumps(42), None, {-32600}),
    (json.dumps("tools/list"), None, {-32600}),
    (json.dumps({"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}), None, {-32600}),
    (json.dumps({"jsonrpc": "2.0", "id": True, "method": "tools/list"}), None, {-32600}),
    (json.dumps({"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}), None, {-32600}),
    (json.dumps({"jsonrpc": "2.0", "id": None, "method": "tools/list"}), None, {-32600}),
    (json.dumps({"jsonrpc": "2.0", "id": HUGE, "method": "tools/list"}), None, {-32600}),
    (json.dumps({"jsonrpc": "2.0", "id": "x" * 100_000, "method": "tools/list"}), None, {-32600}),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    home = tmp_path_factory.mktemp("mcp_stdio")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["GPU_ADVISOR_HOME"] = str(home)
    process = subprocess.Popen(
        [str(GPU_ADVISOR), "mcp", "--db", str(ensure_db(home / "catalog.sqlite"))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)

    def exchange(line: str) -> dict | None:
        """Send one line; the one response line it gets, or None when none comes."""
        process.stdin.write(line.encode("utf-8", "surrogateescape") + b"\n")
        process.stdin.flush()
        if not selector.select(NO_ANSWER_S):
            return None
        return json.loads(process.stdout.readline())

    initialized = exchange(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"},
                },
            }
        )
    )
    assert initialized["result"]["serverInfo"]["name"] == "gpu-advisor"
    process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode() + b"\n")
    yield exchange
    process.stdin.close()
    process.wait(timeout=30)


@pytest.mark.parametrize(("line", "expected_id", "codes"), MALFORMED, ids=[f"m{i}" for i in range(len(MALFORMED))])
def test_every_malformed_message_gets_a_json_rpc_error(server, line, expected_id, codes):
    answer = server(line)
    assert answer is not None, f"no answer to {line[:80]!r}"
    assert answer["jsonrpc"] == "2.0" and answer["id"] == expected_id, answer
    assert answer["error"]["code"] in codes and answer["error"]["message"], answer
    assert len(json.dumps(answer)) < 2_000  # one short line, never the input echoed back


def test_the_server_still_answers_after_the_malformed_messages(server):
    for line, _, _ in MALFORMED:
        server(line)
    listed = server(json.dumps({"jsonrpc": "2.0", "id": 99, "method": "tools/list"}))
    assert listed["id"] == 99 and {tool["name"] for tool in listed["result"]["tools"]} >= {"estimate", "rank"}


def test_a_notification_with_bad_params_gets_no_answer_but_breaks_nothing(server):
    """JSON-RPC answers requests, never notifications: the next request's answer is the next line."""
    bad = json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "x"})
    process_answer = server(bad + "\n" + json.dumps({"jsonrpc": "2.0", "id": 100, "method": "tools/list"}))
    assert process_answer["id"] == 100 and "result" in process_answer
