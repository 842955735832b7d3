"""Worker processes that each listen on their own socket, so that the kernel spreads connections over them.

uvicorn's `workers=N` binds one socket in the parent and every worker accepts from it; the kernel wakes the
workers waiting on it in LIFO order, so one worker takes most connections and every keep-alive request on them
(benchmarks/http_turns.py: 8 clients, all on one of 2 workers, the other core idle). On Linux each worker here binds
its own socket into an SO_REUSEPORT group instead, and the kernel hashes each new connection to one of them.
The socket is made with IPPROTO_TCP, so asyncio sets TCP_NODELAY on the connections it accepts (uvicorn's shared
socket has protocol 0, and they keep Nagle's algorithm: uvicorn issue 3149). Elsewhere, or on port 0, uvicorn's
own shared socket is used."""

from __future__ import annotations

import functools
import socket
import sys
from typing import Any


def own_sockets(workers: int, port: int) -> bool:
    """Whether the workers listen on their own sockets: several workers, a fixed port, Linux's SO_REUSEPORT."""
    return workers > 1 and port != 0 and sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to (host, port) in the port's SO_REUSEPORT group (not yet listening)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def run(app: str, *, host: str, port: int, workers: int, **options: Any) -> None:
    """uvicorn.run(app, host=, port=, workers=, **options), each worker on its own socket where own_sockets."""
    import uvicorn

    if not own_sockets(workers, port):
        uvicorn.run(app, host=host, port=port, workers=workers, **options)
        return
    from uvicorn.supervisors import Multiprocess

    config = uvicorn.Config(app, host=host, port=port, workers=workers, **options)
    Multiprocess(config, target=functools.partial(_serve_worker, config), sockets=[]).run()


def _serve_worker(config: Any, sockets: list[socket.socket] | None = None) -> None:
    """One worker process: its own listening socket, and uvicorn's server on it."""
    import uvicorn

    uvicorn.Server(config).run(sockets=[listening_socket(config.host, config.port)])
