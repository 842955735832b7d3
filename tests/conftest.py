"""Fixtures shared by several test modules, and one temp folder for the whole run.

Every temp file of the run (the private data folder tools.catalog.private_data_folder makes under the temp dir,
with the compare stores and catalog records a run derives, ~130 MB; pytest's tmp_path; PostgreSQL and Chromium
scratch) goes to one folder made here and removed when the run ends: a run leaves nothing in the user's own
`<temp>/gpu-advisor-<uid>`, which the product on the same machine uses. Set before any test module is imported,
and inherited by the servers the tests start (TMPDIR)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.shared_data import shared_path

RUN_TEMP = Path(tempfile.mkdtemp(prefix="gpu-advisor-tests-"))
RUN_TEMP.chmod(0o755)  # others may pass through, as in /tmp (PostgreSQL runs as its own user); its folders are private
os.environ["TMPDIR"] = str(RUN_TEMP)
tempfile.tempdir = str(RUN_TEMP)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Remove the run's temp folder."""
    shutil.rmtree(RUN_TEMP, ignore_errors=True)


@pytest.fixture
def shared_catalog() -> Path:
    """The shared v7 catalog folder: a test using it fails under CI when it is missing, and skips with the reason
    otherwise (tests.shared_data.shared_path)."""
    return shared_path("data", "skypilot-catalog-v7")


@pytest.fixture(scope="module")
def advisor(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Any]:
    """The real offline Advisor with its own catalog and threads, one per test module (a module may define its own)."""
    from agent.service import Advisor

    home = tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1])
    advisor = Advisor(checkpoint_path=home / "threads.sqlite", db_path=home / "catalog.sqlite")
    yield advisor
    advisor.close()
