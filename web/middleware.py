"""ASGI middleware for the limits: request body size (413) and read time (408), per-client rate (429), and JSON
CORS rejections."""

from __future__ import annotations

import asyncio
import os
import time

from starlette.middleware.cors import CORSMiddleware
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from web.errors import INTERNAL_MESSAGE, error_response, log_internal
from web.rate_limit import TokenBucketLimiter, retry_after_header

BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
BODY_TIMEOUT_S = 10.0
"""Default limit for receiving a whole request body ($GPU_ADVISOR_BODY_TIMEOUT_S): a client that stops half-way
cannot hold a connection and a worker."""


def _header(scope: Scope, name: bytes) -> str | None:
    """One request header, decoded, or None."""
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


class BodySizeLimit:
    """Reject request bodies over `max_bytes` with 413 before the app sees them (Content-Length or streamed)."""

    def __init__(
        self, app: ASGIApp, *, max_bytes: int, path_limits: dict[str, int] | None = None, timeout_s: float | None = None
    ) -> None:
        """Wrap `app`; `path_limits` gives some paths their own limit (Slack's button payloads carry a message);
        the whole body must arrive within `timeout_s` ($GPU_ADVISOR_BODY_TIMEOUT_S, default BODY_TIMEOUT_S)."""
        self.app = app
        self.max_bytes = max_bytes
        self.path_limits = dict(path_limits or {})
        self.timeout_s = (
            timeout_s if timeout_s is not None else _env_seconds("GPU_ADVISOR_BODY_TIMEOUT_S", BODY_TIMEOUT_S)
        )

    @staticmethod
    def _too_large(limit: int) -> Response:
        """The 413 response."""
        return error_response(413, "body_too_large", f"request body over {limit} bytes")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Buffer the (small) body up to the limit, then replay it to the app."""
        if scope["type"] != "http" or scope["method"] not in BODY_METHODS:
            await self.app(scope, receive, send)
            return
        limit = self.path_limits.get(scope.get("path", ""), self.max_bytes)
        declared = _header(scope, b"content-length")
        if declared is not None and declared.strip().isdigit() and int(declared) > limit:
            await self._too_large(limit)(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                message = await asyncio.wait_for(receive(), timeout=max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                message_text = f"the request body did not arrive within {self.timeout_s:g} s"
                response = error_response(408, "request_timeout", message_text, headers={"Connection": "close"})
                await response(scope, receive, send)
                return
            if message["type"] != "http.request":  # client went away before sending the body
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await self._too_large(limit)(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            """The buffered body once, then whatever the client sends next (a disconnect)."""
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _env_seconds(name: str, default: float) -> float:
    """A positive number of seconds from the environment, else `default`."""
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if 0 < value < 86_400 else default


class CatchAll:
    """Turn any exception the app lets through into a JSON 500 with an error id (traceback only in the log).

    Starlette's own last-resort handler re-raises after answering, which makes uvicorn drop the keep-alive
    connection; this one answers and keeps the connection usable."""

    def __init__(self, app: ASGIApp) -> None:
        """Wrap `app`."""
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Run the app; on an exception answer 500 if nothing was sent yet, else end the response."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watch(message: Message) -> None:
            """Remember whether the response has begun."""
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except Exception as error:
            error_id = log_internal(error, f"{scope.get('method')} {scope.get('path')}")
            if not started:
                await error_response(500, "internal_error", INTERNAL_MESSAGE, error_id=error_id)(scope, receive, send)
            else:
                await send({"type": "http.response.body", "body": b"", "more_body": False})


def client_key(scope: Scope) -> str:
    """Who a request counts against: the peer address. X-Forwarded-For has already been applied by uvicorn, and only
    for the proxies in $GPU_ADVISOR_TRUSTED_PROXIES (web.serving.listen.uvicorn_proxy_options)."""
    client = scope.get("client")
    return client[0] if client else "unknown"


class RateLimit:
    """Apply one token bucket per client to the paths under `prefixes` (the API and the MCP endpoint, so tool calls
    cost the same either way); 429 with Retry-After when it is empty."""

    def __init__(
        self, app: ASGIApp, *, limiter: TokenBucketLimiter, prefixes: tuple[str, ...] = ("/api/", "/mcp")
    ) -> None:
        """Wrap `app`."""
        self.app = app
        self.limiter = limiter
        self.prefixes = prefixes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Count the request, or answer 429."""
        if scope["type"] == "http" and scope["method"] != "OPTIONS" and scope["path"].startswith(self.prefixes):
            wait = self.limiter.acquire(client_key(scope))
            if wait is not None:
                retry = retry_after_header(wait)
                response = error_response(
                    429, "rate_limited", f"too many requests; retry in {retry} s", headers={"Retry-After": retry}
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class JsonCORSMiddleware(CORSMiddleware):
    """Starlette's CORS middleware, whose rejected preflights answer with the API's JSON error shape."""

    def preflight_response(self, request_headers) -> Response:  # type: ignore[override]
        """The usual preflight answer; a rejection (400 plain text) becomes a JSON error with code cors_rejected."""
        response = super().preflight_response(request_headers)
        if response.status_code < 400:
            return response
        reason = response.body.decode("utf-8", "replace") if isinstance(response.body, bytes) else "rejected"
        headers = {k: v for k, v in response.headers.items() if k.lower() not in {"content-length", "content-type"}}
        return error_response(response.status_code, "cors_rejected", reason, headers=headers)
