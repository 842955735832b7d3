"""Each `serve` worker listens on its own socket (web/serving/workers.py): the kernel spreads connections over the
workers instead of one worker taking them all, and accepted connections get TCP_NODELAY. Real sockets, a real
asyncio server and a real `gpu-advisor serve --workers 2`, read through Linux's /proc."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import time
from collections import Counter
from pathlib import Path

import httpx2
import pytest

from tests.serve_process import ServeProcess, free_port, serve_env
from web.serving.workers import listening_socket, own_sockets

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SO_REUSEPORT balancing is Linux's")


@linux_only
def test_sockets_of_one_group_share_a_port_that_others_cannot_take():
    port = free_port()
    first, second = listening_socket("127.0.0.1", port), listening_socket("127.0.0.1", port)
    try:
        assert first.proto == second.proto == socket.IPPROTO_TCP
        with socket.socket() as outsider, pytest.raises(OSError):  # a second `serve` on the port is refused
            outsider.bind(("127.0.0.1", port))
    finally:
        first.close()
        second.close()
    assert own_sockets(2, port) and not own_sockets(1, port) and not own_sockets(2, 0)


def _accepted_nodelay(server_socket: socket.socket) -> int:
    """TCP_NODELAY of a connection an asyncio server accepted on `server_socket`."""

    async def run() -> int:
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            seen.set_result(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connect, sock=server_socket)
        _, writer = await asyncio.open_connection(*server_socket.getsockname()[:2])
        value = await asyncio.wait_for(seen, 10)
        writer.close()
        server.close()
        return value

    return asyncio.run(run())


@linux_only
def test_connections_accepted_on_a_workers_socket_do_not_wait_for_acks():
    # (a protocol-0 socket, as uvicorn binds its shared one, kept Nagle on under this machine's Python, not under
    # CI's: asyncio's behaviour there, not this product's, so only the workers' socket is asserted)
    assert _accepted_nodelay(listening_socket("127.0.0.1", free_port())) != 0


def _socket_owners(pids: list[int]) -> dict[int, int]:
    """Socket inode -> the pid (of `pids`) holding it open."""
    owners = {}
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                owners[int(target[8:-1])] = pid
    return owners


def _tcp_entries(port: int) -> list[tuple[int, int, str]]:
    """(local port, remote port, state) and inode of /proc/net/tcp entries whose local or remote port is `port`."""
    entries = []
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = int(fields[1].split(":")[1], 16), int(fields[2].split(":")[1], 16)
        if port in (local, remote):
            entries.append((local, remote, fields[3], int(fields[9])))
    return entries


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@linux_only
def test_two_workers_listen_on_their_own_sockets_and_both_get_connections(tmp_path):
    server = ServeProcess(port=free_port(), env=serve_env(tmp_path), workers=2).start()
    clients = [httpx2.Client(base_url=server.url, timeout=30) for _ in range(16)]
    try:
        for client in clients:  # 16 keep-alive connections, each open after one request
            assert client.get("/healthz").status_code == 200
        time.sleep(0.2)
        workers = _children(server.process.pid)  # uvicorn's supervisor's children (the workers, a tracker)
        owners = _socket_owners(workers)
        entries = _tcp_entries(server.port)
        listening = {owners.get(inode) for local, _, state, inode in entries if local == server.port and state == "0A"}
        served = Counter(
            owners.get(inode) for local, _, state, inode in entries if local == server.port and state == "01"
        )
    finally:
        for client in clients:
            client.close()
        server.stop()
    assert len(listening) == 2 and None not in listening  # a socket of its own in each worker
    assert sum(served.values()) >= 16 and set(served) == listening, served  # both workers took connections
