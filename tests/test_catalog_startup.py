"""Start-up: the deep integrity check (PRAGMA quick_check) runs when the catalog file changed, not on every start.
Each start is a fresh process (its own in-process memo) on a real catalog in tmp_path; the record of checked
catalog versions lives in the private temp folder, pointed at tmp_path with TMPDIR."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tools.catalog import build_from_snapshot

ROOT = Path(__file__).resolve().parents[1]
START = """
import json, sys
import tools.catalog.store as store
deep = []
original = store.inspect_catalog
def spy(path, **kw):
    deep.append(kw.get("deep", True))
    return original(path, **kw)
store.inspect_catalog = spy
status = store.ensure_catalog(sys.argv[1])
print(json.dumps({"deep": deep, "notice": status.notice, "path": str(status.path)}))
"""


def start(db: Path, tmp: Path) -> dict:
    """One start in a fresh process: which checks ran (deep or not) and the notice."""
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", START, str(db)], capture_output=True, text=True, env=env, check=True, cwd=ROOT
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture()
def catalog(tmp_path: Path) -> Path:
    """A catalog built from the shipped snapshot."""
    (tmp_path / "data").mkdir()
    return build_from_snapshot(tmp_path / "data" / "catalog.sqlite")


def test_second_start_skips_the_deep_check_and_a_changed_file_gets_it_again(catalog: Path, tmp_path: Path):
    temp = tmp_path / "tmp"
    temp.mkdir()
    assert start(catalog, temp)["deep"] == [True]  # first start: full check, recorded
    assert start(catalog, temp)["deep"] == [False]  # same file: header, meta and schema only
    records = next(temp.glob("gpu-advisor-*/verified-catalogs.json"))
    assert str(catalog.resolve()) in json.loads(records.read_text())

    # The file changes (same size, damaged pages in the middle, new mtime): the deep check runs and finds it.
    data = bytearray(catalog.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 8192] = b"\xff" * 8192
    catalog.write_bytes(bytes(data))
    third = start(catalog, temp)
    assert third["deep"][0] is True
    assert third["notice"] and "damaged" in third["notice"]
    assert list(catalog.parent.glob("catalog.sqlite.damaged-*"))
    assert start(catalog, temp)["deep"] == [False]  # the rebuilt catalog was checked and recorded


def test_unwritable_record_folder_means_a_deep_check_every_start(catalog: Path, tmp_path: Path):
    temp = tmp_path / "tmp"
    temp.mkdir()
    (temp / f"gpu-advisor-{os.getuid()}").write_text("not a folder")  # no private folder: nothing recorded
    assert start(catalog, temp)["deep"] == [True]
    assert start(catalog, temp)["deep"] == [True]
