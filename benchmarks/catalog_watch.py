"""A catalog file rolled out under a running server (issue 27): the first chat turn and the first /compare job page
after the change, with the server's catalog watch on (the default) and off, in the same run.

One server at a time (the real app under uvicorn on 127.0.0.1, one worker) on a synthetic catalog of --size offers
(benchmarks/catalog_scale.py's, kept in --keep and reused). For each setting: start the server and wait until the
catalog it started on is prepared; make a new version of the file (touched, as a rollout that copies a file in
place leaves it); wait --after seconds (a person does not ask in the same millisecond); then time, over HTTP, one
chat turn on a job asked before the change (its ranking must read the new version) and the first page of a job
view on /compare (after --after seconds, or once the new version is ready when that takes longer). With the watch
on, also when the new version was ready (its candidates read and its store built) after the change.

Run: .venv/bin/python benchmarks/catalog_watch.py [--size 1000000] [--after 30] [--keep /tmp]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx2
import uvicorn
from catalog_scale import COMPARE_JOB, synthesise

from web.app import create_app
from web.compare import store_path
from web.settings import ServerSettings

CHAT_JOB = "LoRA on Llama 3.1 8B, 10k examples, budget $50"


def _wait(check, timeout_s: float = 600.0) -> float:  # type: ignore[no-untyped-def]
    """Seconds until check() holds."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > timeout_s:
            raise SystemExit("timed out")
        time.sleep(0.05)
    return time.monotonic() - start


def one_setting(catalog: Path, watch_s: float, after_s: float, home: Path) -> dict[str, float]:
    """Start a server on `catalog` with catalog_watch_s=`watch_s`, change the catalog, time what follows."""
    settings = ServerSettings(
        db_path=catalog,
        checkpoint_path=home / f"threads-{watch_s}.sqlite",
        rate_per_minute=0,
        catalog_watch_s=watch_s,
    )
    server = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    _wait(lambda: server.started)
    url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    figures: dict[str, float] = {}
    try:
        with httpx2.Client(base_url=url, timeout=900) as http:
            http.post("/api/chat", json={"message": CHAT_JOB})  # the job asked before the change
            _wait(lambda: store_path(catalog).exists())  # the version it started on, prepared
            time.sleep(2 * max(watch_s, 0.1))  # the watch has looked at it (when on)
            os.utime(catalog)  # a new version of the file
            changed = time.monotonic()
            if watch_s:
                figures["ready_s"] = _wait(lambda: store_path(catalog).exists())
            time.sleep(max(0.0, after_s - (time.monotonic() - changed)))
            figures["asked_s"] = time.monotonic() - changed
            start = time.perf_counter()
            answer = http.post("/api/chat", json={"message": CHAT_JOB})
            figures["chat_s"] = time.perf_counter() - start
            assert answer.status_code == 200 and answer.json()["offers"], answer.text
            start = time.perf_counter()
            page = http.get("/api/compare", params={"job": COMPARE_JOB, "sort": "job_cost"})
            figures["job_page_s"] = time.perf_counter() - start
            assert page.status_code == 200 and page.json()["rows"], page.text
    finally:
        server.should_exit = True
        thread.join(60)
    return figures


def main() -> None:
    """Print both settings' figures and the command."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="offers in the synthetic catalog")
    parser.add_argument(
        "--after", type=float, default=30.0, help="seconds between the change and the first asks (at least)"
    )
    parser.add_argument("--keep", default=tempfile.gettempdir(), help="folder where the catalog is kept")
    args = parser.parse_args()
    catalog = Path(args.keep) / f"gpu-advisor-scale-{args.size}.sqlite"
    if not catalog.exists():
        synthesise(args.size, catalog)
    home = Path(tempfile.mkdtemp(prefix="gpu-advisor-watch-"))
    print(f"{args.size:,} offers; the first asks {args.after:g} s after the catalog file changed")
    for watch_s in (0.0, 2.0):
        found = one_setting(catalog, watch_s, args.after, home)
        ready = f", new version ready {found['ready_s']:.1f} s after the change" if "ready_s" in found else ""
        print(
            f"catalog watch {'off' if not watch_s else f'every {watch_s:g} s'}: first chat turn "
            f"{found['chat_s'] * 1000:8.1f} ms, first /compare job page {found['job_page_s']:7.3f} s (asked "
            f"{found['asked_s']:.1f} s after the change){ready}",
            flush=True,
        )
    print(f"reproduce: .venv/bin/python benchmarks/catalog_watch.py --size {args.size} --after {args.after:g}")


if __name__ == "__main__":
    main()
