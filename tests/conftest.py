"""Fixtures shared by several test modules."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.shared_data import shared_path


@pytest.fixture
def shared_catalog() -> Path:
    """The shared v7 catalog folder: a test using it fails under CI when it is missing, and skips with the reason
    otherwise (tests.shared_data.shared_path)."""
    return shared_path("data", "skypilot-catalog-v7")
