"""`gpu-advisor threads stats|prune`: the stored conversations (SQLite file or PostgreSQL) and their retention."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import typer

from cli.output import UserError, console, key_value_table, print_json

threads_app = typer.Typer(
    help="Stored conversation threads: how much they take, and deleting idle ones.", no_args_is_help=True
)

DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$", re.IGNORECASE)
UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "": 86400}
_CHECKPOINTS_OPTION = typer.Option(
    None, "--checkpoints", help="Threads SQLite file (default: $GPU_ADVISOR_HOME/threads.sqlite or the user data dir)."
)
_URL_OPTION = typer.Option(
    None,
    "--database-url",
    envvar="GPU_ADVISOR_DATABASE_URL",
    help="postgresql://… when the threads live in PostgreSQL.",
    show_envvar=True,
)


def parse_duration(text: str) -> float:
    """'30d', '12h', '90m', '45s', '2w' or a plain number of days -> seconds."""
    match = DURATION.match(text or "")
    if not match:
        raise UserError(f"--older-than must look like 30d, 12h, 90m, 45s or 2w (got {text!r})")
    return float(match.group(1)) * UNIT_S[match.group(2).lower()]


def describe_duration(seconds: float) -> str:
    """12 s, 5 min, 3 h or 30 days."""
    for unit, size in (("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:g} {unit}"
    return f"{seconds:g} s"


def _open(checkpoints: Path | None, database_url: str | None) -> tuple[Any, str]:
    """The thread store and a name for it; an explicit file must already be a threads database."""
    from agent.threads import check_threads_file, database_url_from, default_threads_path, open_thread_store

    url = database_url_from(database_url or "")
    if url:
        return open_thread_store(Path(), url), "postgresql"
    path = checkpoints or default_threads_path()
    if checkpoints is None and not path.exists():
        return None, str(path)  # nothing stored yet: nothing to create
    check_threads_file(path)
    return open_thread_store(path), str(path)


def _stats(store: Any) -> dict[str, Any]:
    """Threads, checkpoints and bytes of a store (zeros when there is none yet)."""
    if store is None:
        return {"threads": 0, "checkpoints": 0, "bytes": 0}
    threads, checkpoints = store.counts()
    return {"threads": threads, "checkpoints": checkpoints, "bytes": store.size_bytes()}


@threads_app.command("stats")
def stats_command(
    checkpoints: Path | None = _CHECKPOINTS_OPTION,
    database_url: str | None = _URL_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    """How many threads and checkpoints are stored, and the bytes they take."""
    store, where = _open(checkpoints, database_url)
    try:
        result = {"store": where, **_stats(store)}
    finally:
        if store is not None:
            store.close()
    if as_json:
        print_json(result)
        return
    console.print(
        key_value_table(
            "Threads",
            [
                ("store", where),
                ("threads", result["threads"]),
                ("checkpoints", result["checkpoints"]),
                ("bytes", result["bytes"]),
            ],
        )
    )


@threads_app.command("prune")
def prune_command(
    older_than: str | None = typer.Option(
        None,
        "--older-than",
        help="Delete threads idle for longer than this "
        "(30d, 12h, 2w; default: "
        "$GPU_ADVISOR_THREAD_RETENTION_DAYS, 90 days).",
    ),
    checkpoints: Path | None = _CHECKPOINTS_OPTION,
    database_url: str | None = _URL_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    """Delete the threads nobody wrote to for a while, then give their space back."""
    from agent.threads import configured_retention_days, prune_threads

    if older_than is not None:
        seconds = parse_duration(older_than)
    else:
        days = configured_retention_days()
        if not days:
            raise UserError("GPU_ADVISOR_THREAD_RETENTION_DAYS is 0 (keep forever): pass --older-than to prune")
        seconds = days * 86400
    store, where = _open(checkpoints, database_url)
    try:
        before = _stats(store)
        removed = prune_threads(store, seconds) if store is not None else []
        if removed:
            store.compact()
        after = _stats(store)
    finally:
        if store is not None:
            store.close()
    result = {
        "store": where,
        "older_than_s": seconds,
        "removed": len(removed),
        "kept": after["threads"],
        "bytes_before": before["bytes"],
        "bytes_after": after["bytes"],
    }
    if as_json:
        print_json(result)
        return
    console.print(
        f"Removed {len(removed)} thread(s) idle for more than {describe_duration(seconds)}; "
        f"{after['threads']} kept ({where}: {before['bytes']} → {after['bytes']} bytes)."
    )


def register(app: typer.Typer) -> None:
    """Add the `threads` command group to the CLI."""
    app.add_typer(threads_app, name="threads")
