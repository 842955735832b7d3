"""Helpers the CLI commands share: one JSON document on stdout, rich tables for people, one-line errors."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from contract.errors import UserError

__all__ = ["UserError", "console", "key_value_table", "print_json", "to_plain"]

console = Console()


def to_plain(value: Any) -> Any:
    """Convert pydantic models (also nested in lists/dicts) into JSON-ready Python values."""
    pydantic = sys.modules.get("pydantic")  # not imported for --help; then no value can be a model
    if pydantic is not None and isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    return value


def print_json(value: Any) -> None:
    """Print exactly one JSON document to stdout."""
    sys.stdout.write(json.dumps(to_plain(value), ensure_ascii=False, indent=2) + "\n")


def key_value_table(title: str, rows: list[tuple[str, Any]]) -> Table:
    """Build a two-column rich table from (label, value) pairs."""
    table = Table(title=title, show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column()
    for label, value in rows:
        table.add_row(label, "" if value is None else str(value))
    return table
