"""The test run keeps its files in its own temp folder (tests/conftest.py), not in the user's private data folder."""

from __future__ import annotations

import os
import tempfile

from tests.conftest import RUN_TEMP
from tools.catalog import private_data_folder


def test_the_private_data_folder_is_the_runs_own() -> None:
    """The compare stores and catalog records a run derives land under the run's temp folder, as do the servers'."""
    folder = private_data_folder()
    assert folder is not None and RUN_TEMP in folder.parents
    assert os.environ["TMPDIR"] == str(RUN_TEMP) == tempfile.gettempdir()
