""".ci/run stops at the first failing check: a lint, format or type error fails CI before the suite runs (a failing
`a && b && c` list under `set -e` once let the run go on to a green suite)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _fake(path: Path, body: str) -> None:
    path.write_text(f"#!/usr/bin/env bash\n{body}\n")
    path.chmod(0o755)


@pytest.mark.parametrize("failing", ["ruff", "mypy"])
def test_a_failing_check_stops_the_run_before_the_suite(tmp_path: Path, failing: str) -> None:
    if shutil.which("chromium") is None or not list(Path("/usr/lib/postgresql").glob("*/bin/initdb")):
        pytest.skip("the script installs chromium and PostgreSQL first when they are missing")
    (tmp_path / ".ci").mkdir()
    shutil.copy(ROOT / ".ci" / "run", tmp_path / ".ci" / "run")
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    shims = tmp_path / "shims"
    shims.mkdir()
    _fake(shims / "python3", "exit 0")  # `python3 -m venv .venv`: the fake venv is already there
    _fake(bin_dir / "pip", "exit 0")
    for tool in ("ruff", "mypy"):
        _fake(bin_dir / tool, "exit 1" if tool == failing else "exit 0")
    _fake(bin_dir / "python", f'echo ran >> "{tmp_path}/suite-ran"')
    env = {**os.environ, "PATH": f"{shims}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", str(tmp_path / ".ci" / "run")], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode != 0
    assert not (tmp_path / "suite-ran").exists()
