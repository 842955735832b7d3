"""Rankings asked again are answered from memory (issue 27): a follow-up turn ranks the thread's plan again (the
checkpoint keeps the job, not its offers), a what-if the plan beside the hypothesis, and a recurring job in a new
thread its spec; with the same catalog file and rate table the ranking is the same, so it is computed once.

Kept per (job spec, catalog path, catalog file version, rate table setting); a rebuilt or updated catalog (a new file
or a new modification time) ranks afresh. `agent.graph.questions.ranked` gives each caller its own copy."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from contract.jobspec import JobSpec
from tools.lru import Lru

SIZE = 64
"""Rankings kept, least recently used dropped first (a ranking's JSON is some tens of kB)."""
FX_VAR = "GPU_ADVISOR_FX_RATES"
"""The rate table the ranking converts budgets with (tools/fx.py reads it on every ranking)."""

_memory: Lru[tuple[Any, ...], list[Any]] = Lru(SIZE)
"""key -> [ranking JSON, notes, the ranking made public or None until asked]"""


def file_version(db_path: Path) -> tuple[int, int, int] | None:
    """(inode, size, modification time in ns) of the catalog file; None when it cannot be read (then not kept)."""
    try:
        stat = Path(db_path).expanduser().stat()
    except (OSError, TypeError):
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


_SHARED = (str, int, float, bool, type(None))
"""Immutable JSON values: a copy shares them."""


def copied(value: Any) -> Any:
    """A copy of a JSON-like value: new dicts and lists all the way down (strings and numbers are shared)."""
    kind = type(value)
    if kind is dict:
        return {key: item if type(item) in _SHARED else copied(item) for key, item in value.items()}
    if kind is list:
        return [item if type(item) in _SHARED else copied(item) for item in value]
    return value


def remembered(
    spec: JobSpec,
    db_path: Path,
    compute: Callable[[], tuple[dict[str, Any], list[str]]],
    *,
    public: bool = False,
    shown: int | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """`compute()` (the ranking JSON and its notes) for this job and catalog version, from memory when asked before
    (the kept objects themselves: callers copy before they change or hand them on); with `public`, the ranking with
    its texts made public (agent.writing.public, done once per kept ranking); `shown`: how many offers `compute`
    lists when not the ranking's default (kept apart from the full ranking); errors are never kept."""
    version = file_version(db_path)
    if version is None:
        ranking, notes = compute()
        return (_public(ranking) if public else ranking), notes
    from tools.ranking import ranking_key  # loaded with the first ranking, not with the agent

    key = (ranking_key(spec), str(db_path), version, os.environ.get(FX_VAR), shown)
    kept = _memory.get(key)
    if kept is None:
        ranking, notes = compute()  # new objects, handed to no one but the memory
        kept = _memory.put(key, [ranking, notes, None])
    if not public:
        return kept[0], kept[1]
    if kept[2] is None:
        kept[2] = _public(kept[0])  # the same value whichever thread makes it first
    return kept[2], kept[1]


def _public(ranking: dict[str, Any]) -> dict[str, Any]:
    """The ranking without internal paths in its texts (issue 11)."""
    from agent.writing import public

    return public(ranking)  # type: ignore[no-any-return]


def forget() -> None:
    """Drop every kept ranking (tests, and a process that changed the catalog in place within one clock tick)."""
    _memory.clear()
