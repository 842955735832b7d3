"""The tool list sent to the LLM: a compact rendering of the registry's schemas that small servers accept.

The registry's schemas (agent/toolbox.py) are for MCP and HTTP callers and keep their full descriptions and bounds.
A small OpenAI-compatible server turns every tool schema into a grammar or a prompt (llama.cpp's server crashed on
faq_search's 2,000-character bound): here each tool gets a short description (prompts/llm_tools.json), property
descriptions are cut to their first clause, titles, defaults, bounds and patterns are dropped (call_tool still validates every
argument and sends errors back to the model), a description that only lists an enum's values is dropped, and
"X or null" becomes X (optional properties are simply not required).
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import prompts

_SENTENCE_END = re.compile(r"(?<!e\.g)(?<!i\.e)\.\s")
_CLAUSE_END = re.compile(r";\s|\s\((?!e\.g)|,\s(?=e\.g)")
DROPPED_KEYS = frozenset(
    {
        "title",
        "default",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "examples",
        "pattern",
        "not",
        "additionalProperties",
    }
)


@cache
def _settings() -> dict[str, Any]:
    """Short tool descriptions and the property description length (prompts/llm_tools.json)."""
    return json.loads(prompts.load("llm_tools.json"))


def _short(text: str, limit: int) -> str:
    """A description's first clause, at most `limit` characters, cut at a word."""
    text = " ".join(text.split())
    for stop in (_SENTENCE_END, _CLAUSE_END):
        head = stop.split(text, 1)[0].rstrip(".")
        if len(head) <= limit:
            return head
    return text[:limit].rsplit(" ", 1)[0].rstrip(",;:")


def _lists_enum(description: str, enum: list[Any]) -> bool:
    """Whether a description does little more than name the enum's values."""
    words = description.replace(",", " ").replace("(default)", " ").replace(".", " ").split()
    rest = [word for word in words if word not in {str(value) for value in enum} and word not in ("or", "and")]
    return len(rest) <= 1


def _without_enum(description: str, enum: Any) -> str:
    """A description without the list of an enum's values it repeats ("Sort key: cost, price" -> "Sort key")."""
    if not isinstance(enum, list):
        return description
    if _lists_enum(description, enum):
        return ""
    values, paren, remark = description.partition(" (")
    if paren and _lists_enum(values, enum):
        return remark.rstrip(")")
    head, colon, tail = description.rpartition(":")
    return head.strip() if colon and _lists_enum(tail, enum) else description


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """`anyOf: [X, {"type": "null"}]` as X (keeping the outer description)."""
    options = schema.get("anyOf")
    if isinstance(options, list):
        real = [option for option in options if option != {"type": "null"}]
        if len(real) == 1 and len(real) < len(options):
            outer = {k: v for k, v in schema.items() if k != "anyOf"}
            return {**real[0], **outer}
    return schema


def compact_schema(schema: Any, *, limit: int | None = None, top: bool = True) -> Any:
    """A JSON schema without what the LLM does not need (see the module docstring); the input is not changed."""
    limit = limit or int(_settings()["property_description_chars"])
    if isinstance(schema, list):
        return [compact_schema(item, limit=limit, top=False) for item in schema]
    if not isinstance(schema, dict):
        return schema
    schema = _without_null(schema)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in DROPPED_KEYS:
            continue
        if key in ("properties", "$defs"):
            out[key] = {name: compact_schema(item, limit=limit, top=False) for name, item in value.items()}
        elif key == "description":
            text = "" if top else _without_enum(_short(value, limit), schema.get("enum"))
            if text:
                out[key] = text
        else:
            out[key] = compact_schema(value, limit=limit, top=False)
    if "$defs" in out:  # a definition's own description repeats the property's
        out["$defs"] = {
            name: {k: v for k, v in item.items() if k != "description"} for name, item in out["$defs"].items()
        }
    return out


def llm_tools() -> list[dict[str, Any]]:
    """The registry as compact OpenAI function-calling tool definitions, for the LLM."""
    from agent.toolbox import TOOLS

    short = _settings()["tools"]
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": short.get(tool.name, tool.description),
                "parameters": compact_schema(tool.input_schema()),
            },
        }
        for tool in TOOLS
    ]
