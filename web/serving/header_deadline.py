"""A bound on the time a request's headers may take (slowloris): uvicorn waits for headers forever, even when they
arrive one byte at a time, so a connection can be held open indefinitely. The protocol class below arms a deadline
when a connection opens and after each response, and disarms it once a request's headers are complete; when it
fires, the client gets a 408 and the connection is closed. `serve` passes it to uvicorn (`http=`)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping

from uvicorn.protocols.http.auto import AutoHTTPProtocol

from contract.errors import UserError

HEADER_TIMEOUT_ENV = "GPU_ADVISOR_HEADER_TIMEOUT_S"
DEFAULT_HEADER_TIMEOUT_S = 10.0
MAX_HEADER_TIMEOUT_S = 300.0
_BODY = b"request headers took too long\n"
TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close"
    b"\r\ncontent-length: " + str(len(_BODY)).encode() + b"\r\n\r\n" + _BODY
)


def header_timeout_s(environ: Mapping[str, str] | None = None) -> float:
    """Seconds a request's headers may take: $GPU_ADVISOR_HEADER_TIMEOUT_S (default 10); UserError if unusable."""
    raw = (os.environ if environ is None else environ).get(HEADER_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_HEADER_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value <= MAX_HEADER_TIMEOUT_S:  # also refuses nan and inf
        raise UserError(
            f"{HEADER_TIMEOUT_ENV}: {raw[:40]!r} is not a number of seconds in (0, {MAX_HEADER_TIMEOUT_S:g}]"
        )
    return value


class HeaderDeadlineProtocol(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
    """uvicorn's HTTP protocol (httptools or h11) with a deadline on every request's headers."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Open: the first request's headers are due within the bound."""
        super().connection_made(transport)  # type: ignore[arg-type]
        self._header_timer: asyncio.TimerHandle | None = None
        self._awaited_after = self.cycle
        self._arm()

    def data_received(self, data: bytes) -> None:
        """Bytes in: a new request cycle means its headers are complete, so the deadline is off."""
        super().data_received(data)
        if self.cycle is not self._awaited_after:
            self._disarm()

    def on_response_complete(self) -> None:
        """A response is done: with no request waiting, the next one's headers are due within the bound."""
        super().on_response_complete()
        idle = (self.cycle is None or self.cycle.response_complete) and not getattr(self, "pipeline", None)
        if idle and not self.transport.is_closing():
            self._awaited_after = self.cycle
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        """Closed: nothing left to time."""
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        """Start (or restart) the header deadline."""
        self._disarm()
        self._header_timer = self.loop.call_later(header_timeout_s(), self._headers_too_slow)

    def _disarm(self) -> None:
        """Cancel the header deadline, if any."""
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        """The deadline fired before the headers were complete: 408 and close."""
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.write(TIMEOUT_RESPONSE)
            self.transport.close()
