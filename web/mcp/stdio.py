"""MCP over stdio with every malformed line answered: the SDK's stdio transport drops a line it cannot parse or
validate without a reply (the client then waits forever), so each line is screened first.

A line that is not JSON, a batch, a non-object, a wrong `jsonrpc`, an id that is not a short string or a safe
integer, a request without a string method, or params that are not an object gets a JSON-RPC error response
(with the request's id when it has a usable one, else null) and never reaches the SDK. A notification with bad
params is dropped (JSON-RPC never answers notifications). Everything else, including unknown methods and params
of the wrong shape for their method, goes on to the SDK, which answers those itself.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterable, AsyncIterator, Callable
from io import TextIOWrapper
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

MAX_ID_CHARS = 200
MAX_SAFE_INTEGER = 2**53 - 1  # ids beyond it do not survive a JavaScript client's number type
DROP = object()  # a screened line that needs no answer (a notification) and must not reach the SDK


def _error(request_id: int | str | None, code: int, message: str) -> types.JSONRPCError:
    """One JSON-RPC error response."""
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


def _usable_id(value: Any) -> bool:
    """Whether `value` is an id we can echo: a short string or a safe integer (never a bool or a float)."""
    if isinstance(value, str):
        return len(value) <= MAX_ID_CHARS
    return type(value) is int and abs(value) <= MAX_SAFE_INTEGER


def screen(line: str) -> types.JSONRPCError | object | None:
    """None for a line the SDK can take, an error response to send back, or DROP."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return _error(None, types.PARSE_ERROR, "Parse error: the line is not JSON")
    if isinstance(message, list):
        return _error(
            None, types.INVALID_REQUEST, "Invalid request: batches are not supported, send one message per line"
        )
    if not isinstance(message, dict):
        return _error(None, types.INVALID_REQUEST, "Invalid request: a message is a JSON object")
    has_id = "id" in message
    if has_id and not _usable_id(message["id"]):
        return _error(
            None,
            types.INVALID_REQUEST,
            f"Invalid request: id must be a string of at most {MAX_ID_CHARS} characters or an integer within ±2^53",
        )
    request_id = message.get("id")
    if message.get("jsonrpc") != "2.0":
        return _error(request_id, types.INVALID_REQUEST, 'Invalid request: jsonrpc must be "2.0"')
    if "method" not in message:
        if has_id and ("result" in message or "error" in message):
            return None  # a client's response to a request of ours
        return _error(request_id, types.INVALID_REQUEST, "Invalid request: no method")
    if not isinstance(message["method"], str):
        return _error(request_id, types.INVALID_REQUEST, "Invalid request: method must be a string")
    if "params" in message and not isinstance(message["params"], dict):
        return _error(request_id, types.INVALID_PARAMS, "Invalid params: params must be an object") if has_id else DROP
    try:
        types.jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError:
        return (
            _error(request_id, types.INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 message") if has_id else DROP
        )
    return None


class ScreenedLines:
    """stdin's lines for the SDK's stdio transport, with the malformed ones answered here instead."""

    def __init__(self, lines: AsyncIterable[str]) -> None:
        """Screen `lines`; answers go out once `answer_to` names the transport's write stream."""
        self._lines = lines
        self._replies: Any = None
        self._ready = anyio.Event()

    def answer_to(self, write_stream: Any) -> None:
        """Send error responses into the transport's write stream (the one the server writes to)."""
        self._replies = write_stream
        self._ready.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        """The lines the SDK may parse; blank lines are skipped."""
        await self._ready.wait()
        async for line in self._lines:
            if not line.strip():
                continue
            verdict = screen(line)
            if verdict is None:
                yield line
            elif isinstance(verdict, types.JSONRPCError):
                await self._replies.send(SessionMessage(verdict))


async def serve_screened_stdio(build: Callable[[], Any]) -> None:
    """Run the low-level server `build()` over stdin/stdout with every line screened."""
    from mcp.server.stdio import stdio_server

    server = build()
    stdin = TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    lines = ScreenedLines(anyio.wrap_file(stdin))
    async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
        lines.answer_to(write_stream)
        await server.run(read_stream, write_stream, server.create_initialization_options())
