"""The installed gpu-advisor version, for `--version`, the API's metadata and /healthz."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def installed_version() -> str:
    """The installed distribution's version (from its metadata), or 'unknown' when run from a bare checkout."""
    try:
        return version("gpu-advisor")
    except PackageNotFoundError:
        return "unknown"
