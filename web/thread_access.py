"""Who may continue a conversation over HTTP: the server mints every thread id (128 random bits) with a capability
token; a turn on an existing thread needs that token or, when GPU_ADVISOR_API_KEYS is set, the API key that started
the thread. Anything else — someone else's thread, an id the server never minted — is 404, as if it did not exist."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Any

from fastapi import Request

from web.blocking import run_blocking
from web.deps import advisor_of, resources
from web.errors import ApiError
from web.schemas import ChatRequest

THREAD_ID_BYTES = 16
TOKEN_BYTES = 32
NOT_FOUND_MESSAGE = "no such conversation (or not yours); omit thread_id to start a new one"


@dataclass(frozen=True, kw_only=True)
class ThreadAccess:
    """The thread a turn runs on, and its token when the caller has it (always for a new thread)."""

    thread_id: str
    token: str | None


def sha256(secret: str) -> str:
    """The hex digest stored instead of a secret."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def presented_key(request: Request) -> str | None:
    """The API key in `Authorization: Bearer …` or `X-API-Key`, if any."""
    header = request.headers.get("authorization", "").strip()
    if header[:7].lower() == "bearer ":
        return header[7:].strip() or None
    return request.headers.get("x-api-key", "").strip() or None


def caller_key(request: Request, api_keys: list[str]) -> str | None:
    """The caller's configured API key; 401 for a key that is not configured; None without keys or without one."""
    key = presented_key(request)
    if key is None or not api_keys:
        return None
    if not any(hmac.compare_digest(key.encode(), known.encode()) for known in api_keys):
        raise ApiError(401, "invalid_api_key", "the API key is not one of the configured keys")
    return key


def _same(digest: str | None, secret: str | None) -> bool:
    """Whether `secret` hashes to `digest` (constant time)."""
    return bool(digest and secret) and hmac.compare_digest(digest, sha256(secret))  # type: ignore[arg-type]


def open_thread(store: Any, thread_id: str | None, token: str | None, key: str | None) -> ThreadAccess:
    """A new thread owned by the caller, or the caller's existing thread; ApiError 404 otherwise."""
    if thread_id is None:
        minted = ThreadAccess(thread_id=secrets.token_hex(THREAD_ID_BYTES), token=secrets.token_urlsafe(TOKEN_BYTES))
        store.set_owner(minted.thread_id, sha256(minted.token), sha256(key) if key else None)  # type: ignore[arg-type]
        return minted
    owner = store.owner(thread_id)
    if owner is None or not (_same(owner[0], token) or _same(owner[1], key)):
        raise ApiError(404, "thread_not_found", NOT_FOUND_MESSAGE)
    return ThreadAccess(thread_id=thread_id, token=token if _same(owner[0], token) else None)


async def resolve_thread(request: Request, body: ChatRequest) -> ThreadAccess:
    """The turn's thread for `body` (run before any answer or stream starts)."""
    res = resources(request)
    store = advisor_of(request).store
    key = caller_key(request, res.settings.api_keys)
    return await run_blocking(res.executor, open_thread, store, body.thread_id, body.thread_token, key)


def with_token(result: dict[str, Any], access: ThreadAccess) -> dict[str, Any]:
    """A turn's result carrying the thread's token (when the caller has it)."""
    return {**result, "thread_id": access.thread_id, "thread_token": access.token}
