"""Events a streaming caller sees while a turn runs: which step runs now, and the verdict as soon as it is known."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from langgraph.config import get_stream_writer

import prompts

LANGUAGES = ("it", "id", "en")


@cache
def progress_labels(language: str) -> dict[str, str]:
    """Localised progress labels (prompts/<lang>/progress.json)."""
    return json.loads(prompts.load_in(language, "progress.json"))


def _writer() -> Any:
    """The graph's stream writer, or None when nobody streams."""
    try:
        return get_stream_writer()
    except RuntimeError:
        return None


def progress(node: str, language: str, **values: Any) -> None:
    """Tell a streaming caller which step runs now (no-op when nobody streams)."""
    write = _writer()
    if write is not None:
        label = progress_labels(language if language in LANGUAGES else "en").get(node, node)
        write({"type": "progress", "node": node, "label": label.format(**values)})


def verdict_known(found: dict[str, Any] | None) -> None:
    """Send the turn's verdict (the one its final result carries) before the answer is phrased, so a client can show
    the recommendation while the text is still being written; nothing for a turn that recommends no rental."""
    write = _writer()
    if write is not None and found and found.get("gpu"):
        write({"type": "verdict", "verdict": found})
