"""Server settings for the web API: where it listens, who may embed it, and the limits it enforces."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

ENV_PREFIX = "GPU_ADVISOR_"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
CATALOG_WATCH_S = 2.0
"""Seconds between looks at the catalog file for a new version to prepare (web.serving.catalog_watch)."""


def split_origins(value: str | list[str] | None) -> list[str]:
    """Turn 'https://a.example, https://b.example' (or a list) into a clean list of origins."""
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else value
    return [item.strip().rstrip("/") for item in items if item and item.strip()]


MAX_WORKERS = 64


def default_workers() -> int:
    """One worker process per core this process may run on (its CPU affinity: a container's share), at most
    MAX_WORKERS."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity API (macOS): every core
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_WORKERS))


class ServerSettings(BaseModel):
    """Everything the app factory needs; every field can also come from a GPU_ADVISOR_<FIELD> variable."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str = Field(default=DEFAULT_HOST, description="Interface to listen on.")
    port: int = Field(default=DEFAULT_PORT, ge=0, le=65535, description="TCP port (0 = any free port).")
    workers: int = Field(
        default_factory=default_workers,
        ge=1,
        le=MAX_WORKERS,
        description="uvicorn worker processes (default: one per core).",
    )
    allowed_origins: list[str] = Field(
        default_factory=list, description="Origins of the sites allowed to embed the widget (CORS)."
    )
    turn_threads: int | None = Field(
        default=None,
        ge=1,
        le=256,
        description="Chat turns one worker process runs at once (default: 2 offline, where a turn is all CPU and "
        "more threads only take it from each other; 32 with an LLM, where turns mostly wait on it).",
    )
    max_body_bytes: int = Field(default=16_384, ge=256, description="Largest request body accepted (413 above).")
    max_message_chars: int = Field(default=2_000, ge=1, description="Longest chat message accepted (422 above).")
    rate_per_minute: float = Field(
        default=30.0, ge=0, description="Requests per minute per client on /api/*; 0 turns the limit off."
    )
    rate_burst: int = Field(default=10, ge=1, description="Requests a client may make at once before the rate applies.")
    checkpoint_path: Path | None = Field(
        default=None,
        description="SQLite file for conversation checkpoints (default: the advisor's, under $GPU_ADVISOR_HOME).",
    )
    db_path: Path | None = Field(default=None, description="Offers catalog database (default: the shipped one).")
    catalog_watch_s: float = Field(
        default=CATALOG_WATCH_S,
        ge=0,
        description="Seconds between looks at the catalog file: a new version (a file rolled out under the running "
        "server) is prepared for chat and /compare before anyone asks; 0 turns the watch off.",
    )
    database_url: str | None = Field(
        default=None,
        repr=False,
        description="postgresql://… : threads, the Slack store and the rate-limit "
        "buckets live in PostgreSQL, shared by every server process.",
    )

    api_keys: list[str] = Field(
        default_factory=list,
        repr=False,
        description="Comma-separated API keys; a thread started with one (Authorization: "
        "Bearer KEY) can be continued with that key as well as its token.",
    )

    @field_validator("api_keys", mode="before")
    @classmethod
    def _keys(cls, value: object) -> list[str]:
        """Accept a comma-separated string as well as a list; blanks dropped."""
        items = value.split(",") if isinstance(value, str) else list(value or [])  # type: ignore[call-overload]
        return [str(item).strip() for item in items if str(item).strip()]

    @field_validator("database_url")
    @classmethod
    def _postgres_url(cls, value: str | None) -> str | None:
        """Only PostgreSQL URLs (the message never repeats the URL: it may hold a password)."""
        if value is not None and not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("GPU_ADVISOR_DATABASE_URL must be a postgresql:// URL")
        return value or None

    @field_validator("allowed_origins", mode="before")
    @classmethod
    def _origins(cls, value: object) -> list[str]:
        """Accept a comma-separated string as well as a list."""
        return split_origins(value)  # type: ignore[arg-type]

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: object) -> ServerSettings:
        """Settings from GPU_ADVISOR_* variables, with explicit `overrides` (None values ignored) on top."""
        environ = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for name in cls.model_fields:
            raw = environ.get(ENV_PREFIX + name.upper())
            if raw is not None and raw.strip():
                values[name] = raw.strip()
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def to_env(self) -> dict[str, str]:
        """The GPU_ADVISOR_* variables that reproduce these settings in a worker process."""
        env: dict[str, str] = {}
        for name, value in self.model_dump().items():
            if value is None:
                continue
            env[ENV_PREFIX + name.upper()] = ",".join(value) if isinstance(value, list) else str(value)
        return env
