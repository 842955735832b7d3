"""The app factory `serve` hands uvicorn (`cli.worker_app:create_app`): each process, the master and every worker
of `--workers N`, applies the process-wide settings of a long-running server before the web app is imported."""

from __future__ import annotations

from typing import Any

from agent.lean_imports import defer_heavy_packages

defer_heavy_packages()  # before web.app imports langgraph: skip package __init__s it does not need


def create_app() -> Any:
    """The FastAPI app from GPU_ADVISOR_* variables, with the advisor's garbage collector tuned for many turns."""
    from agent.gc_tuning import for_long_running
    from web.app import create_app_from_env

    return create_app_from_env(tune=for_long_running)
