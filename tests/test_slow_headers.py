"""A client that trickles its request headers (slowloris) is cut off: `gpu-advisor serve` bounds the time a
request's headers may take (GPU_ADVISOR_HEADER_TIMEOUT_S), on a fresh connection and on a kept-alive one, with a 408,
while a normal request on the same server is still answered. Driven with a raw socket against the real command."""

from __future__ import annotations

import contextlib
import socket
import time

import pytest

from tests.serve_process import ServeProcess, free_port, serve_env

HEADER_TIMEOUT_S = 2
TRICKLE_FOR_S = 40  # how long the client keeps trickling before the test gives up: far beyond the bound


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = ServeProcess(
        port=free_port(),
        env=serve_env(tmp_path_factory.mktemp("slow_headers"), GPU_ADVISOR_HEADER_TIMEOUT_S=str(HEADER_TIMEOUT_S)),
    )
    running.start()
    yield running
    running.stop()


def _trickle(connection: socket.socket, prefix: bytes = b"") -> bytes:
    """Send a request line then one header byte every 0.5 s; what the server sent before closing (b"" = none)."""
    connection.settimeout(0.5)
    connection.sendall(prefix + b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    received = b""
    stop = time.monotonic() + TRICKLE_FOR_S
    while time.monotonic() < stop:
        try:
            connection.sendall(b"X")
        except OSError:
            return received  # closed by the server
        try:
            chunk = connection.recv(65536)
        except TimeoutError:
            continue
        except OSError:
            return received
        if not chunk:
            return received
        received += chunk
    raise AssertionError(f"the connection was still open after trickling headers for {TRICKLE_FOR_S} s")


def test_a_trickled_header_is_cut_off_with_408(server):
    with socket.create_connection(("127.0.0.1", server.port)) as connection:
        received = _trickle(connection)
    assert received.startswith(b"HTTP/1.1 408"), received[:200]


def test_a_kept_alive_connection_is_bounded_too(server):
    with socket.create_connection(("127.0.0.1", server.port)) as connection:
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = b""
        while b"\r\n\r\n" not in first:
            first += connection.recv(65536)
        assert first.startswith(b"HTTP/1.1 200")
        time.sleep(0.5)  # let the rest of the first response arrive
        connection.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            connection.recv(65536)
        connection.setblocking(True)
        received = _trickle(connection)
    assert received.startswith(b"HTTP/1.1 408"), received[:200]


def test_a_normal_request_is_still_answered(server):
    with socket.create_connection(("127.0.0.1", server.port)) as connection:
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200") and b'"advisor"' in answer
