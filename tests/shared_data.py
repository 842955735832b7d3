"""Where the project's shared inputs live (../shared beside the repository, or GPU_ADVISOR_SHARED) and how tests
treat anything missing: under CI=true a failure, on a developer's machine a skip with the reason."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("GPU_ADVISOR_SHARED", REPO.parent / "shared"))


def unavailable(reason: str, *, module_level: bool = False) -> None:
    """Something a test needs is missing: fail under CI, skip (with the reason) elsewhere."""
    if os.environ.get("CI"):
        pytest.fail(f"required under CI: {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=module_level)


def shared_path(*parts: str) -> Path:
    """A path under shared/; when it is missing, CI fails the test and a developer's run skips with the reason."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        unavailable(f"{path} is missing (shared/ is expected beside the repository, or set GPU_ADVISOR_SHARED)")
    return path


def import_or_unavailable(name: str, *, module_level: bool = False) -> ModuleType:
    """pytest.importorskip that fails under CI (a missing playwright must not turn the browser tests into skips)."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        unavailable(f"{name} is not installed ({error})", module_level=module_level)
        raise  # not reached: unavailable() raises


needs_shared_catalog = pytest.mark.usefixtures("shared_catalog")
"""Marks a test that reads the shared v7 catalog (the `shared_catalog` fixture in tests/conftest.py)."""
