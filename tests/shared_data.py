"""Where the project's shared inputs live (../shared beside the repository) and how tests treat a missing one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("GPU_ADVISOR_SHARED", REPO.parent / "shared"))


def shared_path(*parts: str) -> Path:
    """A path under shared/; when it is missing, CI fails the test and a developer's run skips with the reason."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        message = f"{path} is missing (shared/ is expected beside the repository, or set GPU_ADVISOR_SHARED)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return path


needs_shared_catalog = pytest.mark.usefixtures("shared_catalog")
"""Marks a test that reads the shared v7 catalog (the `shared_catalog` fixture in tests/conftest.py)."""
