"""POST /api/chat (one JSON answer) and POST /api/chat/stream (Server-Sent Events) on top of the Advisor."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import pydantic_core
from fastapi import APIRouter, Body, Depends, Request, Response
from fastapi.encoders import jsonable_encoder
from fastapi.responses import StreamingResponse
from fastapi.sse import format_sse_event

from web.blocking import batches_in_thread, run_blocking
from web.body_gate import gated
from web.deps import AppResources, advisor_of, app_resources, resources, turn_pool
from web.errors import INTERNAL_MESSAGE, ApiError, ErrorResponse, log_internal, new_error_id
from web.schemas import CHAT_EXAMPLES, ChatRequest, ChatResult
from web.thread_access import ThreadAccess, resolve_thread, with_token

router = APIRouter(prefix="/api", tags=["chat"])

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorResponse, "description": text}
    for status, text in (
        (401, "An API key that is not configured (code invalid_api_key)."),
        (404, "thread_id is not a conversation of the caller (code thread_not_found)."),
        (413, "Request body too large (code body_too_large)."),
        (422, "Invalid input (codes invalid_input, message_too_long)."),
        (429, "Rate limit reached (code rate_limited); see Retry-After."),
        (503, "The advisor is still loading (code not_ready)."),
    )
}
STREAM_EVENT_TYPES = frozenset({"progress", "verdict", "delta", "final", "error"})
THREAD_ID_HEADER = "X-Thread-Id"
THREAD_TOKEN_HEADER = "X-Thread-Token"
CHAT_BODY_GATE = gated(ChatRequest, endpoint_checks=("anyOf",))  # the empty-message rule: checked_chat_request


async def checked_chat_request(
    request: Request, body: ChatRequest = Body(openapi_examples=CHAT_EXAMPLES)
) -> ChatRequest:
    """The chat body, rejected with 422 message_too_long above the configured length (checked before streaming; a
    coroutine, so that FastAPI does not run it in its thread pool)."""
    limit = resources(request).settings.max_message_chars
    if len(body.message) > limit:
        raise ApiError(422, "message_too_long", f"message has {len(body.message)} characters; the limit is {limit}")
    if not body.message.strip() and not body.changes and not body.prefer:
        raise ApiError(422, "empty_message", "the message is empty; describe the training job or ask a question")
    return body


async def turn_thread(
    request: Request, response: Response, body: ChatRequest = Depends(checked_chat_request)
) -> ThreadAccess:
    """The thread the turn runs on: minted for a new conversation, else the caller's own (404 otherwise); also in
    the X-Thread-Id / X-Thread-Token headers, so a stream's client knows its thread before the first event."""
    access = await resolve_thread(request, body)
    response.headers[THREAD_ID_HEADER] = access.thread_id
    if access.token:
        response.headers[THREAD_TOKEN_HEADER] = access.token
    return access


def _advisor_arguments(body: ChatRequest, access: ThreadAccess) -> dict[str, Any]:
    """Keyword arguments for Advisor.respond/stream."""
    return {"thread_id": access.thread_id, "language": body.language, "prefer": body.prefer, "changes": body.changes}


@router.post(
    "/chat",
    response_model=ChatResult,
    responses=ERROR_RESPONSES,
    summary="Ask the advisor; one JSON answer",
    dependencies=[CHAT_BODY_GATE],
)
async def chat(
    request: Request,
    body: ChatRequest = Depends(checked_chat_request),
    access: ThreadAccess = Depends(turn_thread),
    res: AppResources = Depends(app_resources),
) -> dict[str, Any]:
    """The advisor's full answer for one turn (the same JSON as `recommend --json`, plus thread_id and
    thread_token)."""
    advisor = advisor_of(request)
    result = await run_blocking(turn_pool(res), advisor.respond, body.message, **_advisor_arguments(body, access))
    return with_token(result, access)


def stream_event(event: Mapping[str, Any], access: ThreadAccess | None = None) -> tuple[str, bytes]:
    """One advisor event as (its type, its SSE bytes), the event named after its type (a final result carries the
    thread's token)."""
    kind = str(event.get("type", ""))
    if kind not in STREAM_EVENT_TYPES:
        raise ValueError(f"unknown advisor event type {kind!r}")
    data = dict(event)
    if kind == "final" and access is not None and isinstance(data.get("result"), dict):
        data["result"] = with_token(data["result"], access)
    return kind, sse_bytes(kind, encode_data(data))


def encode_data(data: Any) -> bytes:
    """An event's data as POST /api/chat writes JSON: pydantic-core's encoder (compact, UTF-8, a non-finite number as
    null), serialised once; a value it cannot write goes through FastAPI's generic encoder first."""
    try:
        return pydantic_core.to_json(data, inf_nan_mode="null")
    except pydantic_core.PydanticSerializationError:
        return pydantic_core.to_json(jsonable_encoder(data), inf_nan_mode="null")


def sse_bytes(kind: str, data: bytes) -> bytes:
    """One event in the SSE wire format (what fastapi.sse.format_sse_event writes for an event name and data, whose
    JSON has no line break: one data line)."""
    if b"\n" in data or b"\r" in data:  # never from the encoder; split into data lines as FastAPI would
        return format_sse_event(data_str=data.decode(), event=kind)
    return b"event: " + kind.encode() + b"\ndata: " + data + b"\n\n"


def error_event(code: str, message: str, error_id: str | None = None) -> bytes:
    """An `error` event that ends a stream instead of breaking it."""
    data = {"type": "error", "code": code, "message": message}
    if error_id:
        data["error_id"] = error_id
    return sse_bytes("error", encode_data(data))


SSE_ITEM_SCHEMA = {
    "type": "object",
    "properties": {
        "data": {"type": "string"},
        "event": {"type": "string"},
        "id": {"type": "string"},
        "retry": {"type": "integer", "minimum": 0},
    },
}
"""What FastAPI's SSE routes advertise for each event (the same schema as before). The route's response class is a
plain StreamingResponse (no media type, so FastAPI adds no `string` schema beside it): FastAPI's EventSourceResponse
would make the route its generic SSE route."""


@router.post(
    "/chat/stream",
    response_class=StreamingResponse,
    responses={
        200: {"description": "Successful Response", "content": {"text/event-stream": {"itemSchema": SSE_ITEM_SCHEMA}}},
        **ERROR_RESPONSES,
    },
    summary="Ask the advisor; Server-Sent Events",
    dependencies=[CHAT_BODY_GATE],
)
async def chat_stream(
    request: Request,
    response: Response,
    body: ChatRequest = Depends(checked_chat_request),
    access: ThreadAccess = Depends(turn_thread),
    res: AppResources = Depends(app_resources),
) -> StreamingResponse:
    """Events `progress` ({node, label}) per step, `verdict` ({verdict}, the final result's verdict, sent as soon as
    it is known), `delta` ({text}) answer chunks, then one `final` ({result})
    with the same JSON as POST /api/chat, or one `error` ({code, message, error_id?}) instead."""
    advisor = advisor_of(request)
    arguments = _advisor_arguments(body, access)
    events = _event_bytes(res, lambda emit: advisor.stream_to(emit, body.message, **arguments), access)
    stream = StreamingResponse(events, media_type="text/event-stream")
    stream.headers["Cache-Control"] = "no-cache"
    stream.headers["X-Accel-Buffering"] = "no"  # nginx: do not buffer the events
    stream.headers.raw.extend(response.headers.raw)  # the thread headers turn_thread set
    return stream


PING_INTERVAL_S = 15.0
"""Seconds without an event after which a keep-alive comment is sent (as FastAPI's own SSE does)."""
KEEPALIVE = b": ping\n\n"


async def _event_bytes(
    res: AppResources, produce: Callable[[Callable[[Mapping[str, Any]], None]], None], access: ThreadAccess
) -> AsyncIterator[bytes]:
    """The turn's events as SSE bytes, the events ready together written in one piece (FastAPI's generic SSE route
    runs two tasks and two memory streams per response and one send per event: ~2x /api/chat's CPU per turn)."""
    ended = False
    try:
        async for batch in batches_in_thread(turn_pool(res), produce, idle_s=PING_INTERVAL_S):
            if not batch:
                yield KEEPALIVE
                continue
            chunk = []
            for event in batch:
                kind, frame = stream_event(event, access)
                chunk.append(frame)
                ended = kind in {"final", "error"}
                if ended:
                    break
            yield b"".join(chunk)
            if ended:
                return
    except ValueError as error:
        yield error_event("invalid_input", " ".join(str(error).split()) or "invalid input")
        return
    except Exception as error:
        yield error_event("internal_error", INTERNAL_MESSAGE, log_internal(error, "POST /api/chat/stream"))
        return
    if not ended:
        yield error_event("internal_error", "the answer ended without a result", new_error_id())
