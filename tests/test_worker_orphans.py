"""`serve --workers 4` whose master is killed with -9: its workers notice and exit (the audit found 4 orphans still
holding the port, so a restart failed with "Address already in use"), and the same command starts again."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.serve_process import ServeProcess, chat, free_port, serve_env

WORKERS = 4
HANG_GUARD_S = 60.0
"""Not a speed target: orphans that are still alive after this long are not going to exit by themselves."""


def workers_of(pid: int) -> list[int]:
    """The worker processes (multiprocessing spawn children) of a process."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    found = []
    for child in map(int, children):
        try:
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.append(child)
        except OSError:
            continue
    return found


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the workers")
def test_workers_exit_when_the_master_is_killed_and_the_port_is_free_again(tmp_path: Path) -> None:
    port = free_port()
    env = serve_env(tmp_path / "home")
    server = ServeProcess(port=port, workers=WORKERS, env=env).start()
    restarted = None
    try:
        workers = workers_of(server.process.pid)
        assert len(workers) == WORKERS, workers
        os.kill(server.process.pid, signal.SIGKILL)
        server.process.wait(timeout=30)
        deadline = time.monotonic() + HANG_GUARD_S
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        orphans = [pid for pid in workers if alive(pid)]
        assert not orphans, f"{len(orphans)} of {WORKERS} workers outlived their master"
        restarted = ServeProcess(port=port, workers=WORKERS, env=env).start()  # the port is free again
        assert chat(restarted.url, {"message": "LoRA fine-tune of Llama 3 8B"})["offers"]
    finally:
        for process in (server, restarted):
            if process is not None and process.process is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.process.pid, signal.SIGKILL)
