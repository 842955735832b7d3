"""A real, throw-away PostgreSQL server for the tests, from Debian's packages (/usr/lib/postgresql/<v>/bin).

`postgres_url` (session fixture) starts one cluster in a temporary directory on a free port with trust auth on
127.0.0.1 and yields its URL. Without the binaries the tests skip with the reason, except under CI (env CI set),
where that is a failure: CI must exercise the PostgreSQL path (.ci/run installs it)."""

from __future__ import annotations

import glob
import os
import shlex
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serve_process import free_port

SERVER_USER = "postgres"
"""PostgreSQL refuses to run as root: as root the cluster is created and run as this user."""
ROOT_PREFIX = "gpu-advisor-pg-"
OWNER_FILE = "owner.pid"
"""The pid of the pytest process that owns a cluster (a later run removes the cluster once that process is gone)."""


def postgres_bin() -> Path | None:
    """The newest installed PostgreSQL bin directory (PG_BIN overrides), or None."""
    override = os.environ.get("PG_BIN")
    if override:
        return Path(override)
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("pg_ctl")
    return Path(on_path).parent if on_path else None


def _run(argv: list[str], *, as_user: str | None) -> None:
    """Run a server command, as `as_user` through su when given."""
    command = ["su", as_user, "-s", "/bin/sh", "-c", shlex.join(argv)] if as_user else argv
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed: {done.stdout[-2000:]}{done.stderr[-2000:]}")


def _stop(bin_dir: Path, data: Path, as_user: str | None) -> None:
    """Stop a cluster at once (it holds no data worth a clean shutdown)."""
    argv = [str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]
    command = ["su", as_user, "-s", "/bin/sh", "-c", shlex.join(argv)] if as_user else argv
    subprocess.run(command, capture_output=True, timeout=60, check=False)


def _alive(pid: int) -> bool:
    """Whether a process exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_orphans(bin_dir: Path, as_user: str | None) -> None:
    """Stop and delete clusters left by test runs that were killed before their teardown (their pytest is gone)."""
    for root in Path(tempfile.gettempdir()).glob(f"{ROOT_PREFIX}*"):
        owner = root / OWNER_FILE
        try:
            pid = int(owner.read_text())
        except (OSError, ValueError):
            continue
        if not _alive(pid):
            _stop(bin_dir, root / "data", as_user)
            shutil.rmtree(root, ignore_errors=True)


def _unavailable(reason: str) -> None:
    """Skip locally; fail under CI."""
    if os.environ.get("CI"):
        pytest.fail(f"PostgreSQL is required in CI: {reason}")
    pytest.skip(f"PostgreSQL tests skipped: {reason} (install Debian's postgresql package)")


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A running PostgreSQL cluster's URL (database 'postgres', user 'postgres', no password, 127.0.0.1)."""
    bin_dir = postgres_bin()
    if bin_dir is None or not (bin_dir / "initdb").exists():
        _unavailable("no PostgreSQL server binaries (initdb, pg_ctl) found")
    as_user = SERVER_USER if os.geteuid() == 0 else None
    remove_orphans(bin_dir, as_user)
    root = Path(tempfile.mkdtemp(prefix=ROOT_PREFIX))
    (root / OWNER_FILE).write_text(str(os.getpid()))
    data = root / "data"
    if as_user:
        shutil.chown(root, user=as_user)
    port = free_port()
    _run(
        [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"],
        as_user=as_user,
    )
    options = (
        f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off"
    )
    _run(
        [
            str(bin_dir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(root / "server.log"),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            "start",
        ],
        as_user=as_user,
    )
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        _stop(bin_dir, data, as_user)
        shutil.rmtree(root, ignore_errors=True)


def fresh_database(url: str) -> str:
    """Create an empty database on the server at `url`; returns its URL (tests stay independent)."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return url.rsplit("/", 1)[0] + f"/{name}"
