"""HTTP JSON bodies through the schema gate (contract/schema_gate.py): a body pydantic accepts but the published
schema forbids (a coerced type, a cross-field rule such as "model or params_b") is a 422 invalid_input, so the API
accepts exactly what /openapi.json says. Bodies pydantic refuses are left to FastAPI's own 422 (its messages)."""

from __future__ import annotations

from typing import Any

from fastapi import Depends, Request
from pydantic import BaseModel, ValidationError

from contract.schema_gate import schema_violation
from web.errors import ApiError


def gated(model: type[BaseModel], *, endpoint_checks: tuple[str, ...] = ()) -> Any:
    """A route dependency refusing JSON bodies that `model` would coerce but its JSON schema forbids (top-level
    rules in `endpoint_checks` are the endpoint's to refuse, with its own error code)."""

    async def check_body(request: Request) -> None:
        """422 for a body outside `model`'s schema that pydantic alone would accept."""
        try:
            data = await request.json()
            model.model_validate(data)
        except (ValueError, ValidationError):  # not JSON, or refused by pydantic: FastAPI answers it
            return
        problem = schema_violation(model, data, endpoint_checks=endpoint_checks)
        if problem:
            raise ApiError(422, "invalid_input", problem)

    return Depends(check_body)
