"""A running server prepares a catalog version it has not seen as soon as the file changes, before anyone asks
(web.serving.catalog_watch): a deployment that rolls out a new catalog file under a running server (README,
"Catalog: read-only") no longer makes its next chat turn read the candidates (~1 s at 1M offers) or its next job
view on /compare wait for the derived store (~13 s at 1M offers). Real files and threads; the server test runs the
real app under uvicorn on 127.0.0.1 and makes no request until the new version is prepared."""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx2
import pytest

import tools.catalog.candidates as candidates_module
from tests.priced_copies import copied_catalog
from tests.web_server import serve, test_settings
from tools.catalog import build_from_snapshot
from web.compare.store import store_path
from web.serving import CatalogWatch
from web.serving.catalog_watch import version_of

FAST = 0.05
"""Seconds between looks in the unit tests."""


def _until(check: Callable[[], bool], timeout_s: float = 20.0) -> bool:
    """Wait until `check()` holds (True) or the time is up (False)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return check()


def _new_version(path: Path, content: bytes) -> None:
    """Replace the file atomically, as a rollout does (a new file renamed into place)."""
    temp = path.with_name(path.name + ".new")
    temp.write_bytes(content)
    os.replace(temp, path)


def test_each_new_version_is_prepared_once_the_first_one_too(tmp_path: Path) -> None:
    """The version found at start is prepared, then each version the file takes, once each."""
    catalog = tmp_path / "catalog.sqlite"
    catalog.write_bytes(b"first")
    seen: list[bytes] = []
    watch = CatalogWatch(catalog, lambda path: seen.append(path.read_bytes()), interval_s=FAST).start()
    try:
        assert _until(lambda: seen == [b"first"])
        _new_version(catalog, b"second")
        assert _until(lambda: len(seen) == 2)
        time.sleep(10 * FAST)
        assert seen == [b"first", b"second"]
    finally:
        watch.stop()


def test_a_file_still_being_written_is_prepared_once_it_settles(tmp_path: Path) -> None:
    """A file that changes at every look (written in place) is left alone until it stays the same for a look."""
    catalog = tmp_path / "catalog.sqlite"
    catalog.write_bytes(b"v0")
    seen: list[bytes] = []
    watch = CatalogWatch(catalog, lambda path: seen.append(path.read_bytes()), interval_s=FAST).start()
    try:
        assert _until(lambda: len(seen) == 1)
        stop = threading.Event()

        def writer() -> None:
            """Append to the file faster than the watch looks."""
            while not stop.is_set():
                with catalog.open("ab") as handle:
                    handle.write(b".")
                time.sleep(FAST / 5)

        thread = threading.Thread(target=writer)
        thread.start()
        time.sleep(12 * FAST)
        assert len(seen) == 1  # never prepared while it changes
        stop.set()
        thread.join()
        assert _until(lambda: len(seen) == 2)
        assert seen[1] == catalog.read_bytes()  # the finished file
    finally:
        watch.stop()


def test_a_failed_preparation_is_one_log_line_and_the_watch_goes_on(tmp_path: Path, caplog) -> None:
    """A version that cannot be prepared is logged once (no traceback); the next version is prepared."""
    catalog = tmp_path / "catalog.sqlite"
    catalog.write_bytes(b"not a catalog")
    seen: list[bytes] = []

    def prepare(path: Path) -> None:
        """Fail on the bad version, record the others."""
        content = path.read_bytes()
        if content == b"not a catalog":
            raise ValueError("file is not a database\nsecond line")
        seen.append(content)

    with caplog.at_level(logging.WARNING, logger="gpu_advisor.web"):
        watch = CatalogWatch(catalog, prepare, interval_s=FAST).start()
        try:
            assert _until(lambda: any("not prepared" in r.getMessage() for r in caplog.records))
            _new_version(catalog, b"good")
            assert _until(lambda: seen == [b"good"])
        finally:
            watch.stop()
    failures = [r for r in caplog.records if "not prepared" in r.getMessage()]
    assert len(failures) == 1
    assert failures[0].exc_info is None and "second line" not in failures[0].getMessage()


def test_a_missing_file_is_waited_for(tmp_path: Path) -> None:
    """No file yet (or removed during a rollout): nothing is prepared until one appears."""
    catalog = tmp_path / "catalog.sqlite"
    seen: list[bytes] = []
    watch = CatalogWatch(catalog, lambda path: seen.append(path.read_bytes()), interval_s=FAST).start()
    try:
        time.sleep(6 * FAST)
        assert seen == []
        _new_version(catalog, b"arrived")
        assert _until(lambda: seen == [b"arrived"])
    finally:
        watch.stop()


def test_stop_ends_the_thread(tmp_path: Path) -> None:
    """stop() returns once the thread has ended, and no preparation runs after it."""
    catalog = tmp_path / "catalog.sqlite"
    catalog.write_bytes(b"x")
    seen: list[bytes] = []
    watch = CatalogWatch(catalog, lambda path: seen.append(path.read_bytes()), interval_s=FAST).start()
    assert _until(lambda: seen == [b"x"])
    watch.stop()
    assert not watch.alive
    _new_version(catalog, b"y")
    time.sleep(6 * FAST)
    assert seen == [b"x"]


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two versions of a catalog: the shipped snapshot, and its rows with a second, dearer copy."""
    folder = tmp_path_factory.mktemp("watch-catalogs")
    return build_from_snapshot(folder / "v1.sqlite"), copied_catalog(folder / "v2.sqlite", [1.0, 1.2])


def test_the_server_prepares_a_new_catalog_file_before_anyone_asks(tmp_path: Path, versions, monkeypatch) -> None:
    """A catalog replaced under a running server: with no request made, the new version's /compare store is built,
    and the next chat turn reads no candidates from the file (the server read them already)."""
    first, second = versions
    catalog = Path(shutil.copy(first, tmp_path / "catalog.sqlite"))
    with serve(test_settings(tmp_path, catalog, catalog_watch_s=FAST)) as running:
        assert _until(lambda: store_path(catalog).exists(), 60)
        shutil.copy(second, tmp_path / "incoming.sqlite")
        os.replace(tmp_path / "incoming.sqlite", catalog)
        assert not store_path(catalog).exists()
        assert _until(lambda: store_path(catalog).exists(), 60), "the new version's store was not built"
        # the store may also come from the startup's own build; the candidates are the watch's to prepare
        watch = running.app.state.resources.catalog_watch
        assert _until(lambda: watch.prepared == version_of(catalog), 60), "the new version was not prepared"
        reads: list[str] = []
        original = candidates_module.candidate_rows

        def counted(path, **wishes):  # type: ignore[no-untyped-def]
            reads.append(path)
            return original(path, **wishes)

        monkeypatch.setattr(candidates_module, "candidate_rows", counted)
        with httpx2.Client(base_url=running.url, timeout=60) as http:
            answer = http.post("/api/chat", json={"message": "LoRA on Llama 3.1 8B, 10k examples"})
        assert answer.status_code == 200, answer.text
        assert answer.json()["offers"], "the turn ranked no offers"
        assert reads == []


def test_the_watch_can_be_turned_off(tmp_path: Path, versions) -> None:
    """catalog_watch_s=0: a replaced catalog is left for the first request (as before)."""
    first, second = versions
    catalog = Path(shutil.copy(first, tmp_path / "catalog.sqlite"))
    with serve(test_settings(tmp_path, catalog, catalog_watch_s=0)):
        assert _until(lambda: store_path(catalog).exists(), 60)
        shutil.copy(second, tmp_path / "incoming.sqlite")
        os.replace(tmp_path / "incoming.sqlite", catalog)
        time.sleep(1.0)
        assert not store_path(catalog).exists()
