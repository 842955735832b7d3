"""The advertised JSON schema as a gate: input pydantic accepts is also checked against the model's own JSON schema,
so nothing the schema forbids is accepted by coercion (0 for a boolean, false for a number, "5" for an integer) and
cross-field rules written in the schema (e.g. "model or params_b") hold. Used by the tool registry (MCP, LLM tool
calls, CLI `tool`) and by the HTTP API's JSON bodies."""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel

MAX_SHOWN = 60


@cache
def _validator(model: type[BaseModel]) -> Any:
    """A compiled JSON-schema validator for `model`'s published (validation-mode) schema."""
    from jsonschema import Draft202012Validator  # on use: keeps CLI start-up lean

    return Draft202012Validator(model.model_json_schema())


def _where(path: Any) -> str:
    """'job.num_gpus' from a JSON path, 'body' for the whole document."""
    return ".".join(str(part) for part in path)[:MAX_SHOWN] or "body"


def _explain(error: Any) -> str:
    """One short line for a schema error, never echoing the input back."""
    kind, rule = error.validator, error.validator_value
    refusal = error.schema.get("x-refusal") if isinstance(error.schema, dict) else None
    if refusal:
        return f"{_where(error.absolute_path)}: {refusal}"
    if kind == "type":
        return f"{_where(error.absolute_path)}: must be of type {rule if isinstance(rule, str) else ' or '.join(rule)}"
    if kind in ("anyOf", "oneOf"):
        needed = [" and ".join(option.get("required", [])) for option in rule if option.get("required")]
        if len(needed) == len(rule):
            return f"{_where(error.absolute_path)}: needs {' or '.join(needed)}"
    if kind in ("anyOf", "oneOf"):
        return f"{_where(error.absolute_path)}: does not match any allowed form"
    if kind == "additionalProperties" and isinstance(error.instance, dict):
        known = set(error.schema.get("properties", {}))
        extra = [str(name)[:40] for name in error.instance if name not in known][:5]
        return f"{_where(error.absolute_path)}: unexpected field(s) {', '.join(extra)}"
    if kind == "enum":
        return f"{_where(error.absolute_path)}: must be one of {', '.join(map(str, rule))[:200]}"
    return f"{_where(error.absolute_path)}: fails {kind} {str(rule)[:MAX_SHOWN]}"


def schema_violation(model: type[BaseModel], data: Any, *, endpoint_checks: tuple[str, ...] = ()) -> str | None:
    """None when `data` (JSON values) satisfies `model`'s JSON schema, else one line naming the first problem;
    top-level rules named in `endpoint_checks` (e.g. 'anyOf') are left to the endpoint, which words them itself."""
    for error in _validator(model).iter_errors(data):
        if not (error.validator in endpoint_checks and not error.absolute_path):
            return _explain(error)
    return None


def one_of_required(*fields: str) -> dict[str, Any]:
    """A JSON-schema extra saying at least one of `fields` must be given (not null; a string not blank)."""
    return {
        "anyOf": [
            {"required": [name], "properties": {name: {"not": {"type": "null"}, "pattern": r"\S"}}} for name in fields
        ]
    }


NOT_BLANK: dict[str, Any] = {"pattern": r"\S"}
"""A JSON-schema extra for a name that must not be blank (pydantic's validator refuses '' and '  ')."""
