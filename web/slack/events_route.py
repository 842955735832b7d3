"""Mount the Slack events endpoint on a FastAPI app when the HTTP credentials are set."""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request, Response
from slack_bolt import App
from slack_bolt.adapter.fastapi import SlackRequestHandler

from web.errors import error_response
from web.slack.bolt_app import create_bolt_app
from web.slack.settings import http_configured, load_settings
from web.slack.store import SlackStore

EVENTS_PATH = "/slack/events"
MAX_NESTING = 100
"""Deepest JSON nesting accepted in a Slack body (Slack's own payloads stay far below; Python's JSON decoder fails
near 1,000 levels with a RecursionError)."""
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")


def nesting_depth(text: str) -> int:
    """How deeply the arrays and objects of a JSON text nest (brackets inside strings do not count)."""
    depth = deepest = 0
    for bracket in _BRACKETS.finditer(_STRINGS.sub("", text)):
        depth = depth + 1 if bracket.group() in "[{" else depth - 1
        deepest = max(deepest, depth)
    return deepest


def too_deep(body: bytes, content_type: str) -> bool:
    """Whether a Slack body (JSON, or a form whose fields Bolt decodes as JSON) nests deeper than MAX_NESTING."""
    text = body.decode("utf-8", "replace")
    if "application/x-www-form-urlencoded" in content_type:
        return any(
            nesting_depth(value) > MAX_NESTING for values in urllib.parse.parse_qs(text).values() for value in values
        )
    return nesting_depth(text) > MAX_NESTING


def slack_configured(environ: Mapping[str, str] | None = None) -> bool:
    """Whether SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET are set (so `mount` will add the endpoint)."""
    return http_configured(environ)


def mount_bolt_app(api: FastAPI, bolt_app: App, path: str = EVENTS_PATH) -> None:
    """Route POSTs on `path` (events, slash commands, interactivity) to a Bolt app."""
    handler = SlackRequestHandler(bolt_app)

    async def slack_events(request: Request) -> Response:
        """Slack's Events API, slash commands and interactivity, signature-checked by Bolt."""
        timestamp = request.headers.get("x-slack-request-timestamp", "")
        if not (timestamp.isascii() and timestamp.isdigit()):  # slack_sdk's int() would raise: 500 instead of 401
            return error_response(401, "unauthorized", "missing or malformed X-Slack-Request-Timestamp")
        if too_deep(await request.body(), request.headers.get("content-type", "")):  # Bolt's json.loads would crash
            return error_response(400, "bad_request", f"the request body is nested more than {MAX_NESTING} levels deep")
        return await handler.handle(request)

    api.add_api_route(path, slack_events, methods=["POST"], include_in_schema=False)


def mount(
    api: FastAPI,
    advisor: Any,
    *,
    environ: Mapping[str, str] | None = None,
    store: SlackStore | None = None,
    api_url: str | None = None,
) -> bool:
    """Add POST /slack/events to `api` answering with `advisor` (or a no-argument function returning it, for apps
    that create it at startup) when the credentials are set; False when they are not. ValueError (naming the variable, never its value) when a token is malformed. `api_url` points the Web API
    client elsewhere (a proxy, or a local stand-in in tests)."""
    if not slack_configured(environ):
        return False
    settings = load_settings(socket_mode=False, environ=environ)
    mount_bolt_app(api, create_bolt_app(settings, advisor, store=store, api_url=api_url))
    return True
