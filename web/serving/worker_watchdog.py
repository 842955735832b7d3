"""Workers of `serve --workers N` exit when their master dies (kill -9 included), instead of holding the port as
orphans: on Linux the kernel sends SIGTERM (prctl PR_SET_PDEATHSIG); everywhere a watchdog thread sees the parent
change and does the same; a worker that has not finished its graceful shutdown a while later exits at once."""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import signal
import sys
import threading
import time

MASTER_PID_VAR = "GPU_ADVISOR_MASTER_PID"
"""Set by `serve` when it starts several workers: the pid their parent must have."""
PR_SET_PDEATHSIG = 1
POLL_S = 1.0
GRACE_S = 30.0
"""After SIGTERM, how long a worker may finish its turns in flight before it exits regardless."""

log = logging.getLogger("gpu_advisor.web")


def _parent_death_signal() -> None:
    """Ask Linux to send this process SIGTERM when its parent dies (nothing elsewhere)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):  # no libc to call: the watchdog thread alone
        pass


def _orphaned(master: int) -> None:
    """Stop this worker: SIGTERM (uvicorn's graceful shutdown), then exit after GRACE_S."""
    log.warning("the serve master (pid %s) is gone: this worker stops", master)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(GRACE_S)
    os._exit(1)


def _watch(master: int) -> None:
    """Poll the parent pid; act once it is no longer the master."""
    while os.getppid() == master:
        time.sleep(POLL_S)
    _orphaned(master)


def watch_master() -> bool:
    """In a worker of `serve --workers N`: exit when the master dies. True when the watch was installed."""
    raw = os.environ.get(MASTER_PID_VAR, "")
    if not raw.isdigit() or int(raw) == os.getpid():
        return False  # not a worker (single-process serve, tests, other hosts of the app)
    master = int(raw)
    _parent_death_signal()
    threading.Thread(target=_watch, args=(master,), name="master-watchdog", daemon=True).start()
    return True
