"""Catalog safety under faults: a file that is not our catalog is never written over, an explicit --db never gets
its folder created, a damaged or outdated catalog of ours is kept aside and rebuilt with a notice, and a read-only
data folder gives one clear line (real files in tmp_path; a real read-only mount when run as root)."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import threading
from pathlib import Path

import pytest

from cli.app import main
from tests.read_only import read_only_supported, run_read_only
from tests.shared_data import unavailable
from tools.catalog.query import (
    APPLICATION_ID,
    CatalogUnavailableError,
    NotACatalogError,
    build_db,
    build_from_catalog_dir,
    build_from_snapshot,
    ensure_catalog,
    inspect_catalog,
    query_offers,
    read_meta,
)

REPO = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "from cli.app import run; run()"]
HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region\n"
ROW = (
    "{name},H100,1,8,32,\"{{'Gpus': [{{'Name': 'H100', 'Count': 1, 'MemoryInfo': {{'SizeInMiB': 81559}}}}], "
    "'TotalGpuMemoryInMiB': 81559}}\",2.00,1.00,us\n"
)


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("GPU_ADVISOR_DB", raising=False)
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def user_catalog(folder: Path, path: Path, rows: int = 40) -> Path:
    """A catalog built by the user from a (small) SkyPilot-format folder."""
    (folder / "lambda").mkdir(parents=True)
    (folder / "lambda" / "vms.csv").write_text(HEADER + "".join(ROW.format(name=f"x{i}") for i in range(rows)))
    build_from_catalog_dir(folder, path)
    return path


def damage(path: Path) -> bytes:
    """Overwrite the second half of the file (pages of tables and indexes; the header stays ours)."""
    size = path.stat().st_size
    with open(path, "r+b") as handle:
        handle.seek(size // 2)
        handle.write(b"\xde\xad\xbe\xef" * ((size - size // 2) // 4))
    return path.read_bytes()


def other_apps_sqlite(path: Path) -> bytes:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (text TEXT)")
    conn.execute("INSERT INTO notes VALUES ('my notes')")
    conn.commit()
    conn.close()
    return path.read_bytes()


# ------------------------------------------------------------------------------------------- not ours: untouched

FOREIGN = {
    "text": lambda p: (p.write_bytes(b"notes\n"), p.read_bytes())[1],
    "empty": lambda p: (p.write_bytes(b""), p.read_bytes())[1],
    "other-sqlite": other_apps_sqlite,
    "sqlite-other-app-id": lambda p: (other_apps_sqlite(p), _set_app_id(p, 0x1234), p.read_bytes())[2],
}


def _set_app_id(path: Path, app_id: int) -> None:
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA application_id = {app_id}")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("kind", sorted(FOREIGN))
@pytest.mark.parametrize("command", [("catalog", "info"), ("catalog", "query", "--limit", "1"), ("catalog", "build")])
def test_a_file_that_is_not_our_catalog_is_never_written_over(
    capsys, home: Path, tmp_path: Path, kind: str, command: tuple[str, ...]
) -> None:
    target = tmp_path / "x.txt"
    before = FOREIGN[kind](target)
    code, out, err = run_cli(capsys, *command, "--db", str(target))
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1 and "not a gpu-advisor catalog" in err
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.txt"]  # no temp file, no kept-aside copy


def test_build_db_refuses_a_foreign_file(tmp_path: Path) -> None:
    target = tmp_path / "notes.sqlite"
    before = other_apps_sqlite(target)
    with pytest.raises(NotACatalogError):
        build_from_snapshot(target)
    assert target.read_bytes() == before


def test_explicit_db_folder_is_never_created(capsys, home: Path, tmp_path: Path) -> None:
    for command in (("catalog", "info"), ("catalog", "build"), ("catalog", "query")):
        code, _out, err = run_cli(capsys, *command, "--db", str(tmp_path / "no" / "such" / "x.sqlite"))
        assert code == 2 and "does not exist" in err and err.count("\n") == 1, (command, err)
    assert not (tmp_path / "no").exists()


def test_default_folder_is_created_on_first_use(capsys, home: Path) -> None:
    code, out, err = run_cli(capsys, "catalog", "info", "--json")
    assert code == 0 and err == ""
    assert json.loads(out)["db_path"] == str(home / "catalog.sqlite")


# ------------------------------------------------------------------------------------------- ours: the marker


def test_catalogs_carry_our_application_id(tmp_path: Path) -> None:
    path = build_from_snapshot(tmp_path / "c.sqlite")
    assert int.from_bytes(path.read_bytes()[68:72], "big") == APPLICATION_ID
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    conn.close()
    assert inspect_catalog(path).state == "ok"


def test_a_catalog_from_before_the_marker_is_still_ours(tmp_path: Path) -> None:
    path = build_from_snapshot(tmp_path / "c.sqlite")
    _set_app_id(path, 0)
    stamp = path.stat().st_mtime_ns
    status = ensure_catalog(path)
    assert status.notice is None and path.stat().st_mtime_ns == stamp
    build_from_snapshot(path)  # and may be rebuilt
    assert inspect_catalog(path).state == "ok"


# ------------------------------------------------------------------------------------------- ours: damaged, outdated


def test_a_damaged_user_catalog_is_kept_aside_and_the_user_told(capsys, home: Path, tmp_path: Path) -> None:
    path = user_catalog(tmp_path / "sky", tmp_path / "mine.sqlite")
    assert read_meta(path)["offer_count"] == 40
    damaged = damage(path)
    assert inspect_catalog(path).state == "damaged"
    code, out, err = run_cli(capsys, "catalog", "info", "--db", str(path), "--json")
    assert code == 0, err
    assert err.startswith("note: catalog ") and "damaged" in err and "your own catalog" in err
    kept = [p for p in tmp_path.iterdir() if p.name.startswith("mine.sqlite.damaged-")]
    assert len(kept) == 1 and kept[0].name in err
    assert kept[0].read_bytes() == damaged  # the bad file is kept, byte for byte
    assert json.loads(out)["meta"]["built_from"] == "snapshot"
    code, out, err = run_cli(capsys, "catalog", "info", "--db", str(path), "--json")
    assert code == 0 and err == ""  # told once; the rebuilt catalog is healthy


def test_outdated_snapshot_catalog_is_rebuilt_and_a_user_one_kept(tmp_path: Path) -> None:
    snap = build_from_snapshot(tmp_path / "snap.sqlite")
    mine = user_catalog(tmp_path / "sky", tmp_path / "mine.sqlite")
    for path in (snap, mine):
        conn = sqlite3.connect(path)
        conn.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
        conn.commit()
        conn.close()
    status = ensure_catalog(snap)
    assert status.notice and "outdated" in status.notice and status.kept_aside is None
    status = ensure_catalog(mine)
    assert status.kept_aside and status.kept_aside.name.startswith("mine.sqlite.outdated-")
    assert read_meta(status.kept_aside)["built_from"] == str(tmp_path / "sky")
    assert read_meta(mine)["schema_version"] == read_meta(snap)["schema_version"] == 4


def test_damage_found_after_start_is_a_clear_error(tmp_path: Path) -> None:
    path = build_from_snapshot(tmp_path / "c.sqlite")
    ensure_catalog(path)
    conn = sqlite3.connect(path)
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'meta'").fetchone()[0]
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with open(path, "r+b") as handle:
        handle.seek((root - 1) * page)
        handle.write(b"\x00" * page)
    with pytest.raises(CatalogUnavailableError, match=r"unreadable.*gpu-advisor catalog build"):
        read_meta(path)


def test_workers_starting_together_rebuild_once(tmp_path: Path) -> None:
    path = user_catalog(tmp_path / "sky", tmp_path / "c.sqlite")
    damage(path)
    results: list[object] = []

    def start() -> None:
        try:
            results.append(ensure_catalog(path))
        except Exception as error:
            results.append(error)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(not isinstance(r, Exception) for r in results), results
    assert len([p for p in tmp_path.iterdir() if ".damaged-" in p.name]) == 1
    assert inspect_catalog(path).state == "ok" and query_offers(path, limit=1)


def test_interrupted_build_leaves_the_old_catalog(tmp_path: Path) -> None:
    path = user_catalog(tmp_path / "sky", tmp_path / "c.sqlite")
    before = path.read_bytes()

    def rows():
        yield {"bad": "row"}

    with pytest.raises(ValueError):
        build_db(path, rows(), {"source": "test"})
    assert path.read_bytes() == before and inspect_catalog(path).state == "ok"


# ------------------------------------------------------------------------------------------- read-only storage


def _read_only_env(tmp_path: Path, **extra: str) -> tuple[Path, dict[str, str]]:
    reason = read_only_supported(tmp_path / "probe")
    if reason:
        unavailable(reason)
    home = tmp_path / "ro"
    home.mkdir()
    env = {
        **os.environ,
        "GPU_ADVISOR_HOME": str(home),
        "PYTHONPATH": str(REPO),
        "TMPDIR": str(tmp_path / "tmp"),
        **extra,
    }
    (tmp_path / "tmp").mkdir()
    if "GPU_ADVISOR_DB" not in extra:
        env.pop("GPU_ADVISOR_DB", None)
    return home, env


def test_read_only_data_folder_falls_back_to_a_private_catalog(tmp_path: Path) -> None:
    home, env = _read_only_env(tmp_path)
    done = run_read_only(home, [*CLI, "catalog", "info", "--json"], env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"note: cannot write the catalog {home}")
    assert "Traceback" not in done.stderr
    fallback = tmp_path / "tmp" / f"gpu-advisor-{os.getuid()}" / "catalog.sqlite"
    assert json.loads(done.stdout)["db_path"] == str(fallback) and inspect_catalog(fallback).state == "ok"
    assert list(home.iterdir()) == []


def test_read_only_explicit_catalog_path_is_one_clear_line(tmp_path: Path) -> None:
    home, env = _read_only_env(tmp_path)
    env["GPU_ADVISOR_DB"] = str(home / "mine.sqlite")
    done = run_read_only(home, [*CLI, "catalog", "info"], env=env)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: cannot write the catalog")
    assert "GPU_ADVISOR_DB" in done.stderr and "Traceback" not in done.stderr


def test_read_only_folder_with_a_good_catalog_works(tmp_path: Path) -> None:
    reason = read_only_supported(tmp_path / "probe")
    if reason:
        unavailable(reason)
    home = tmp_path / "ro"
    home.mkdir()
    build_from_snapshot(home / "catalog.sqlite")
    env = {**os.environ, "GPU_ADVISOR_HOME": str(home), "PYTHONPATH": str(REPO)}
    env.pop("GPU_ADVISOR_DB", None)
    done = run_read_only(home, [*CLI, "catalog", "query", "--gpu", "H100", "--limit", "2", "--json"], env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["count"] == 2


def test_kill_9_during_a_build_keeps_the_old_catalog_and_leftovers_are_cleaned(tmp_path: Path) -> None:
    import signal
    import subprocess
    import time

    path = user_catalog(tmp_path / "sky", tmp_path / "c.sqlite")
    before = path.read_bytes()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        [*CLI, "catalog", "build", "--db", str(path)],
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".catalog-*.sqlite.tmp")) and time.monotonic() < deadline:
        time.sleep(0.01)  # the build has begun writing its temp file
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert path.read_bytes() == before and inspect_catalog(path).state == "ok"
    leftovers = list(tmp_path.glob(".catalog-*.sqlite.tmp"))
    assert leftovers, "the build was not caught in the middle"
    for leftover in leftovers:
        os.utime(leftover, (time.time() - 7200, time.time() - 7200))  # as if killed two hours ago
    build_from_snapshot(path)
    assert not list(tmp_path.glob(".catalog-*.sqlite.tmp"))
    assert inspect_catalog(path).state == "ok"


def test_a_catalog_moved_aside_while_it_is_inspected_reads_as_missing_not_foreign(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker rebuilding a damaged catalog moves it aside before the new one takes its place; another worker that
    saw the file a moment before must not call the gap 'not a gpu-advisor catalog' (it refused to start with
    NotACatalogError when the rename fell between its checks)."""
    path = tmp_path / "c.sqlite"
    seen = {"first": True}
    real = os.path.lexists

    def existed_a_moment_ago(candidate: object) -> bool:
        """True on the first look at the catalog path (it was there), the truth after (moved aside)."""
        if Path(str(candidate)) == path and seen.pop("first", False):
            return True
        return real(candidate)  # type: ignore[arg-type]

    monkeypatch.setattr(os.path, "lexists", existed_a_moment_ago)
    assert inspect_catalog(path).state == "missing"
