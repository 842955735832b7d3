"""Chat turns per second over HTTP with 1, 8 and 32 concurrent clients against the offline agent.

One uvicorn server (with its worker processes) serves the real app plus two bare FastAPI endpoints added for comparison:
- /bench/advisor: a plain `def` route calling `advisor.respond` directly (no limits, no validation, no SSE),
  i.e. the same agent work without this API's layers; the target is /api/chat >= 0.3 of its rate;
- /bench/noop: returns {} (the HTTP ceiling of this machine, for scale).
Each client holds conversations of two turns (the Italian job, then "e con 2 GPU?" in the same thread).

Also printed: time to the first SSE byte and to the first answer text (`event: delta`) of /api/chat/stream, for one
client at a time (p50/p95 over new jobs and follow-ups).

Also printed: the server's CPU per turn (all its processes), the ceiling cores / CPU per turn, and /api/chat's
share of it; the server runs the workers `serve` starts by default (one per core) unless --workers says otherwise.
The clients run in this process on the same cores: their CPU is printed too, with /api/chat's share of the ceiling
the cores they leave would give (on a machine where they take a core, the first share cannot pass about 0.5).

Run: .venv/bin/python benchmarks/http_turns.py [--seconds 6] [--clients 1,8,32] [--workers N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2
from fastapi import Body, Request

JOB = "QLoRA su Llama 3 8B, budget 50 euro, vanno bene le spot?"
FOLLOW_UP = "e con 2 GPU?"
ENDPOINTS = ("/api/chat", "/api/chat/stream", "/bench/advisor", "/bench/noop")


def bench_app(home: str) -> Any:
    """The real app (rate limit off) plus the two bare comparison endpoints."""
    from web.app import create_app
    from web.settings import ServerSettings

    app = create_app(
        ServerSettings(
            rate_per_minute=0,
            checkpoint_path=Path(home) / "threads.sqlite",
            db_path=Path(home) / "catalog.sqlite",
            max_body_bytes=65536,
        )
    )

    @app.post("/bench/advisor")
    def bare_advisor(request: Request, body: dict = Body(...)) -> dict:
        """The advisor with nothing around it."""
        return request.app.state.resources.advisor.respond(body["message"], thread_id=body.get("thread_id"))

    @app.post("/bench/noop")
    def bare_noop(body: dict = Body(...)) -> dict:
        """Nothing at all."""
        return {}

    return app


def bench_app_from_env() -> Any:
    """bench_app for uvicorn's worker processes (the data folder from GPU_ADVISOR_BENCH_HOME)."""
    return bench_app(os.environ["GPU_ADVISOR_BENCH_HOME"])


def serve(port: int, home: str, workers: int) -> None:
    """Run the benchmark server (child process) with `workers` uvicorn worker processes, as `serve` would."""
    try:
        from web.serving import run_workers
    except ImportError:  # code from before each worker had its own socket (PYTHONPATH=another checkout)
        from uvicorn import run as run_workers

    os.environ["GPU_ADVISOR_BENCH_HOME"] = home
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    run_workers(
        "http_turns:bench_app_from_env",
        factory=True,
        host="127.0.0.1",
        port=port,
        workers=workers,
        log_level="warning",
        access_log=False,
    )


def _tree_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) used so far by a process and all its live descendants (Linux /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        times[int(entry.name)] = (int(fields[11]) + int(fields[12])) / ticks
    tree, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, ppid in parents.items() if ppid == parent and child not in tree]
        tree.update(children)
        frontier.extend(children)
    return sum(times.get(member, 0.0) for member in tree)


async def one_turn(client: httpx2.AsyncClient, path: str, body: dict[str, Any]) -> dict[str, str]:
    """Send one turn; return the thread id and token the server gave, as a follow-up sends them (empty for the
    noop endpoint)."""
    if path.endswith("/stream"):
        async with client.stream("POST", path, json=body) as response:
            text = "".join([chunk async for chunk in response.aiter_text()])
        response.raise_for_status()
        final = [line for line in text.splitlines() if line.startswith("data:") and '"final"' in line]
        if not final:
            raise RuntimeError(f"no final event: {text[-300:]}")
        result = json.loads(final[-1][5:])["result"]
    else:
        response = await client.post(path, json=body)
        response.raise_for_status()
        result = response.json()
    return {key: result[key] for key in ("thread_id", "thread_token") if result.get(key)}


async def client_loop(base: str, path: str, stop_at: float, counts: list[int]) -> None:
    """One client: two-turn conversations until the time is up."""
    async with httpx2.AsyncClient(base_url=base, timeout=120) as client:
        while time.perf_counter() < stop_at:
            thread = await one_turn(client, path, {"message": JOB})
            counts.append(1)
            if time.perf_counter() >= stop_at:
                break
            await one_turn(client, path, {"message": FOLLOW_UP, **thread})
            counts.append(1)


async def measure(
    base: str, path: str, clients: int, seconds: float, server_pid: int | None = None
) -> tuple[float, float, float, float]:
    """(turns per second, server CPU seconds per turn, server CPU and client CPU in cores: CPU seconds per second)
    with `clients` concurrent clients (the clients are this process)."""
    counts: list[int] = []
    cpu = _tree_cpu_s(server_pid) if server_pid else 0.0
    client_cpu = time.process_time()
    start = time.perf_counter()
    await asyncio.gather(*(client_loop(base, path, start + seconds, counts) for _ in range(clients)))
    wall = time.perf_counter() - start
    rate = len(counts) / wall
    used = (_tree_cpu_s(server_pid) - cpu) if server_pid else 0.0
    return rate, used / max(len(counts), 1), used / wall, (time.process_time() - client_cpu) / wall


async def first_bytes(base: str, turns: int) -> tuple[list[float], list[float], list[float]]:
    """(first byte ms, first answer text ms, whole turn ms) of streamed turns, one client, alternating a new job
    and a follow-up."""
    firsts, texts, totals = [], [], []
    async with httpx2.AsyncClient(base_url=base, timeout=120) as client:
        thread: dict[str, str] = {}
        for index in range(turns):
            body = {"message": JOB} if index % 2 == 0 else {"message": FOLLOW_UP, **thread}
            start = time.perf_counter()
            first = text_at = None
            buffer = ""
            async with client.stream("POST", "/api/chat/stream", json=body) as response:
                async for chunk in response.aiter_text():
                    now = (time.perf_counter() - start) * 1000
                    first = first if first is not None else now
                    buffer += chunk
                    if text_at is None and "event: delta" in buffer:
                        text_at = now
            totals.append((time.perf_counter() - start) * 1000)
            firsts.append(first or totals[-1])
            texts.append(text_at or totals[-1])
            if index % 2 == 0:
                final = [line for line in buffer.splitlines() if line.startswith("data:") and '"thread_id"' in line]
                result = json.loads(final[-1][5:])["result"] if final else {}
                thread = {key: result[key] for key in ("thread_id", "thread_token") if result.get(key)}
    return firsts, texts, totals


def _p(values: list[float], share: float) -> float:
    """Percentile of the values."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * (len(ordered) - 1) + 0.5))]


def _free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_ready(base: str, process: subprocess.Popen, timeout_s: float = 120) -> None:
    """Block until the server's advisor is loaded."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("benchmark server exited")
        try:
            if httpx2.get(base + "/healthz", timeout=2).json().get("advisor"):
                return
        except httpx2.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError("benchmark server did not start")


def main() -> None:
    """Start the server, measure every endpoint at every concurrency, print the table and the command."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="measuring time per cell")
    parser.add_argument("--clients", default="1,8,32", help="comma-separated client counts")
    parser.add_argument(
        "--workers", type=int, help="server worker processes (default: what `serve` starts, ServerSettings' default)"
    )
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--home", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.home, args.workers or 1)
        return
    from web.settings import ServerSettings

    workers = args.workers or ServerSettings().workers
    cores = len(os.sched_getaffinity(0))
    levels = [int(n) for n in args.clients.split(",")]
    with tempfile.TemporaryDirectory() as home:
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH") or str(Path(__file__).resolve().parents[1])}
        server = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(port), "--home", home, "--workers", str(workers)], env=env
        )
        try:
            _wait_ready(base, server)
            asyncio.run(measure(base, "/api/chat", 2 * workers, 2.0 + workers))  # warm every worker's caches
            cells = {
                (path, n): asyncio.run(measure(base, path, n, args.seconds, server.pid))
                for n in levels
                for path in ENDPOINTS
            }
            rates = {key: cell[0] for key, cell in cells.items()}
            firsts, texts, totals = asyncio.run(first_bytes(base, 20))
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(
        f"machine: {cores} CPU cores usable; server: {workers} uvicorn worker(s); {args.seconds:g} s per cell; "
        "turns alternate a new Italian job and a follow-up in the same thread"
    )
    print(
        f"{'clients':>7} {'/api/chat':>11} {'/api/chat/stream':>17} {'bare advisor':>13} {'chat/bare':>10} "
        f"{'stream/bare':>12} {'bare noop':>10}"
    )
    for n in levels:
        chat, stream, bare, noop = (rates[(p, n)] for p in ENDPOINTS)
        print(
            f"{n:>7} {chat:>11.1f} {stream:>17.1f} {bare:>13.1f} {chat / bare:>10.2f} {stream / bare:>12.2f} "
            f"{noop:>10.1f}"
        )
    print("turns/s; target: /api/chat >= 0.3 x the bare advisor endpoint")
    print(
        f"{'clients':>7} {'chat CPU ms/turn':>17} {'stream CPU ms/turn':>19} {'stream/chat CPU':>16} "
        f"{'chat ceiling':>13} {'chat/ceiling':>13} {'server cores':>13} {'client cores':>13} {'chat/left':>10}"
    )
    for n in levels:
        _, chat_cpu, server_cores, client_cores = cells[("/api/chat", n)]
        stream_cpu = cells[("/api/chat/stream", n)][1]
        ceiling = cores / chat_cpu if chat_cpu else float("inf")  # turns/s all cores could give at this CPU cost
        left = max(cores - client_cores, 1e-9) / chat_cpu if chat_cpu else float("inf")  # what the clients leave
        print(
            f"{n:>7} {chat_cpu * 1000:>17.1f} {stream_cpu * 1000:>19.1f} {stream_cpu / chat_cpu:>16.2f} "
            f"{ceiling:>13.1f} {rates[('/api/chat', n)] / ceiling:>13.2f} {server_cores:>13.2f} {client_cores:>13.2f} "
            f"{rates[('/api/chat', n)] / left:>10.2f}"
        )
    print(
        "CPU: the server's processes (all workers); ceiling = cores / CPU per turn; target chat/ceiling >= 0.8. "
        "server / client cores: CPU seconds per second of /api/chat's cell (the clients are this process, on the "
        "same cores); chat/left: turns/s against (cores - client cores) / CPU per turn, what the server could do "
        "with the cores the clients leave it"
    )
    print(
        f"/api/chat/stream, 1 client, {len(totals)} turns: first byte p50 {_p(firsts, 0.5):.0f} ms / p95 "
        f"{_p(firsts, 0.95):.0f} ms; first answer text p50 {_p(texts, 0.5):.0f} ms / p95 {_p(texts, 0.95):.0f} ms; "
        f"whole turn p50 {_p(totals, 0.5):.0f} ms / p95 {_p(totals, 0.95):.0f} ms"
    )
    print(
        f"reproduce: .venv/bin/python benchmarks/http_turns.py --seconds {args.seconds:g} --clients {args.clients}"
        + (f" --workers {args.workers}" if args.workers else "")
    )


if __name__ == "__main__":
    main()
