"""Downloading one catalog file over HTTP(S) with an overall deadline (standard library only).

A watchdog closes the connection when the deadline passes, so a server that trickles a byte every few seconds, or
never finishes its headers, cannot hold ``catalog update`` longer than its ``--timeout``.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Self

MAX_FILE_BYTES = 64 * 1024 * 1024
CHUNK = 64 * 1024


class DownloadError(RuntimeError):
    """The file could not be downloaded completely (the message names the URL)."""


class _Watchdog:
    """Shuts down the sockets opened for one download when its deadline passes."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._fire)
        self._timer.daemon = True

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self.fired:
                _shutdown(sock)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            for sock in self._sockets:
                _shutdown(sock)

    def __enter__(self) -> Self:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _opener(watchdog: _Watchdog) -> urllib.request.OpenerDirector:
    """A urllib opener whose HTTP(S) connections register their socket with `watchdog` (proxies still honoured)."""

    def watched(base: type[http.client.HTTPConnection]) -> type[http.client.HTTPConnection]:
        class Watched(base):  # type: ignore[valid-type, misc]
            def connect(self) -> None:
                super().connect()
                watchdog.watch(self.sock)

        return Watched

    http_class, https_class = watched(http.client.HTTPConnection), watched(http.client.HTTPSConnection)

    class Http(urllib.request.HTTPHandler):
        def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(http_class, req)

    class Https(urllib.request.HTTPSHandler):
        def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(https_class, req, context=self._context)  # type: ignore[attr-defined]

    return urllib.request.build_opener(Http, Https, SameHostRedirects)


class SameHostRedirects(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only to the same host and port, on the same scheme or from http to https."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        """The redirected request, or DownloadError for a redirect off the catalog's own host or scheme."""
        old, new = urllib.parse.urlsplit(req.full_url), urllib.parse.urlsplit(newurl)
        same_scheme = new.scheme == old.scheme or (old.scheme, new.scheme) == ("http", "https")
        if not same_scheme or new.hostname != old.hostname or (new.port != old.port and new.scheme == old.scheme):
            raise DownloadError(f"{req.full_url}: redirect to {newurl[:120]} refused (only the same host, http(s))")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def download(url: str, dest: Path, deadline: float, total_s: float) -> bool:
    """Fetch `url` into `dest` before `deadline` (a time.monotonic() value). False on HTTP 404; DownloadError on
    anything else wrong: HTTP errors, a connection that drops, a short body, a file over MAX_FILE_BYTES, or the
    deadline passing (`total_s` is only quoted in that message)."""
    if time.monotonic() >= deadline:
        raise DownloadError(f"{url}: not started, the {total_s:g} s limit (--timeout) was used up")
    with _Watchdog(deadline) as watchdog:
        received = 0
        try:
            response = _opener(watchdog).open(url, timeout=max(0.1, deadline - time.monotonic()))
            with response:
                status = getattr(response, "status", 200)
                if status != 200:
                    raise DownloadError(f"{url}: HTTP {status}")
                expected = response.headers.get("Content-Length")
                with open(dest, "wb") as out:
                    while True:
                        chunk = response.read1(CHUNK)
                        if not chunk:
                            break
                        received += len(chunk)
                        if received > MAX_FILE_BYTES:
                            raise DownloadError(f"{url}: larger than {MAX_FILE_BYTES} bytes")
                        out.write(chunk)
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return False
            raise DownloadError(f"{url}: HTTP {error.code} {error.reason}") from error
        except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
            if watchdog.fired:
                raise DownloadError(
                    f"{url}: too slow, gave up after {total_s:g} s (--timeout) with {received} bytes received"
                ) from error
            if isinstance(error, http.client.IncompleteRead):
                raise DownloadError(
                    f"{url}: connection closed after {received + len(error.partial)} bytes (truncated download)"
                ) from error
            reason = getattr(error, "reason", None) or error
            raise DownloadError(f"{url}: download failed after {received} bytes ({reason})") from error
        if watchdog.fired:
            raise DownloadError(
                f"{url}: too slow, gave up after {total_s:g} s (--timeout) with {received} bytes received"
            )
    if expected is not None and expected.isdigit() and received != int(expected):
        raise DownloadError(f"{url}: got {received} bytes, Content-Length said {expected} (truncated download)")
    return True
