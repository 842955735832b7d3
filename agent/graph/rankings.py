"""Rankings asked again are answered from memory (issue 27): a follow-up turn ranks the thread's plan again (the
checkpoint keeps the job, not its offers), a what-if the plan beside the hypothesis, and a recurring job in a new
thread its spec; with the same catalog file and rate table the ranking is the same, so it is computed once.

Kept per (job spec, catalog path, catalog file version, rate table setting); a rebuilt or updated catalog (a new file
or a new modification time) ranks afresh. `agent.graph.questions.ranked` gives each caller its own copy."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from contract.jobspec import JobSpec

SIZE = 64
"""Rankings kept, least recently used dropped first (a ranking's JSON is some tens of kB)."""
FX_VAR = "GPU_ADVISOR_FX_RATES"
"""The rate table the ranking converts budgets with (tools/fx.py reads it on every ranking)."""

_memory: OrderedDict[tuple[Any, ...], tuple[dict[str, Any], list[str]]] = OrderedDict()
_lock = threading.Lock()


def file_version(db_path: Path) -> tuple[int, int, int] | None:
    """(inode, size, modification time in ns) of the catalog file; None when it cannot be read (then not kept)."""
    try:
        stat = Path(db_path).expanduser().stat()
    except (OSError, TypeError):
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def copied(value: Any) -> Any:
    """A copy of a JSON-like value: new dicts and lists all the way down (strings and numbers are shared)."""
    kind = type(value)
    if kind is dict:
        return {key: copied(item) for key, item in value.items()}
    if kind is list:
        return [copied(item) for item in value]
    return value


def remembered(
    spec: JobSpec, db_path: Path, compute: Callable[[], tuple[dict[str, Any], list[str]]]
) -> tuple[dict[str, Any], list[str]]:
    """`compute()` (the ranking JSON and its notes) for this job and catalog version, from memory when asked before
    (the kept objects themselves: callers copy before they change or hand them on); errors are never kept."""
    version = file_version(db_path)
    if version is None:
        return compute()
    key = (spec.model_dump_json(), str(db_path), version, os.environ.get(FX_VAR))
    with _lock:
        kept = _memory.get(key)
        if kept is not None:
            _memory.move_to_end(key)
    if kept is None:
        kept = compute()  # new objects, handed to no one but the memory
        with _lock:
            _memory[key] = kept
            while len(_memory) > SIZE:
                _memory.popitem(last=False)
    return kept


def forget() -> None:
    """Drop every kept ranking (tests, and a process that changed the catalog in place within one clock tick)."""
    with _lock:
        _memory.clear()
