"""A small YAML writer for documents with a comment above each key (what SkyPilot task files look like)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass
class Commented:
    """A mapping whose values carry an optional comment: {key: (value, comment or None)}."""

    items: dict[str, tuple[Any, str | None]]

    def plain(self) -> dict[str, Any]:
        """The mapping without comments (nested Commented values too)."""
        return {
            key: value.plain() if isinstance(value, Commented) else value
            for key, (value, _comment) in self.items.items()
        }


def _scalar(value: Any) -> str:
    """A YAML scalar: null, true/false, numbers as they are, strings JSON-quoted (always valid YAML)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)


def _comment_lines(comment: str | None, pad: str) -> list[str]:
    """A comment as '# ' lines at the given indentation."""
    return [f"{pad}# {line}".rstrip() for line in comment.splitlines()] if comment else []


def _lines(value: Any, indent: int) -> list[str]:
    """The YAML lines of one mapping at the given indentation."""
    pad = " " * indent
    entries = value.items.items() if isinstance(value, Commented) else ((k, (v, None)) for k, v in value.items())
    out: list[str] = []
    for key, (item, comment) in entries:
        out += _comment_lines(comment, pad)
        if isinstance(item, (Commented, dict)):
            out.append(f"{pad}{key}:")
            out += _lines(item, indent + 2)
        elif isinstance(item, str) and "\n" in item:
            out.append(f"{pad}{key}: |")
            out += [f"{pad}  {line}".rstrip() for line in item.rstrip("\n").splitlines()]
        else:
            out.append(f"{pad}{key}: {_scalar(item)}")
    return out


def render_yaml(document: Commented, *, header: str | None = None) -> str:
    """The document as YAML text with its comments, a header comment first."""
    return "\n".join(_comment_lines(header, "") + _lines(document, 0)) + "\n"
