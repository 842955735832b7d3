"""What endpoints take from the running app: settings, the advisor, the thread pool and the catalog path."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import Request

from web.errors import ApiError
from web.settings import ServerSettings


@dataclass(kw_only=True)
class AppResources:
    """Objects created at startup and closed at shutdown."""

    settings: ServerSettings
    """The settings the app was built with."""
    executor: ThreadPoolExecutor
    """Threads that run the synchronous tools, thread access and exports."""
    turns: ThreadPoolExecutor | None = None
    """Threads that run chat turns (web.app.turn_threads of them); `executor` until the app has started."""
    advisor: Any = None
    """agent.service.Advisor once loaded."""
    catalog_path: Path | None = None
    """The offers database the tool endpoints query."""
    catalog_watch: Any = None
    """web.serving.CatalogWatch while the server watches its catalog file for new versions (None otherwise)."""


def resources(request: Request) -> AppResources:
    """The app's resources (a dependency)."""
    return request.app.state.resources


async def app_resources(request: Request) -> AppResources:
    """The app's resources as a route dependency: a coroutine, since FastAPI runs a plain function dependency in its
    thread pool, a thread hop that waits for the GIL while turns run (up to the 5 ms switch interval, per hop)."""
    return resources(request)


def turn_pool(res: AppResources) -> ThreadPoolExecutor:
    """The threads chat turns run in."""
    return res.turns or res.executor


def advisor_of(request: Request) -> Any:
    """The loaded advisor, or 503 while the server is still starting."""
    advisor = resources(request).advisor
    if advisor is None:
        raise ApiError(503, "not_ready", "the advisor is still loading; retry in a moment")
    return advisor
