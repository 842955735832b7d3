"""Every error the API returns: JSON `{"error": {"code", "message"}}` with a stable code, never a stack trace."""

from __future__ import annotations

import logging
import uuid

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from contract.errors import UserError
from contract.jobspec import describe_validation_error
from tools.catalog import CatalogError

log = logging.getLogger("gpu_advisor.web")

STATUS_CODES: dict[int, str] = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "body_too_large",
    415: "unsupported_media_type",
    422: "invalid_input",
    408: "request_timeout",
    429: "rate_limited",
    503: "unavailable",
}
"""The code used for a plain HTTP error of each status (Starlette's own 404/405 and friends)."""


class ErrorBody(BaseModel):
    """What went wrong, for programs (`code`) and people (`message`)."""

    code: str = Field(description="Stable machine-readable code, e.g. 'message_too_long'.", examples=["rate_limited"])
    message: str = Field(description="One readable line.", examples=["too many requests; retry in 2 s"])
    error_id: str | None = Field(default=None, description="Id to find the server log line (internal errors only).")


class ErrorResponse(BaseModel):
    """The JSON body of every error response."""

    error: ErrorBody


class ApiError(Exception):
    """An error with an HTTP status and a stable code, raised by endpoints and middleware."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        """Remember status, code, message and extra response headers."""
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}


def error_payload(code: str, message: str, error_id: str | None = None) -> dict:
    """The JSON document for one error."""
    return ErrorResponse(error=ErrorBody(code=code, message=" ".join(message.split()), error_id=error_id)).model_dump(
        exclude_none=True
    )


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None, error_id: str | None = None
) -> JSONResponse:
    """A JSON error response."""
    return JSONResponse(error_payload(code, message, error_id), status_code=status, headers=headers)


def new_error_id() -> str:
    """A short id that ties a client-visible internal error to the server log."""
    return uuid.uuid4().hex[:12]


def log_internal(error: BaseException, where: str) -> str:
    """Log an unexpected exception with its traceback (server side only) and return its error id."""
    error_id = new_error_id()
    log.error("internal error %s in %s", error_id, where, exc_info=error)
    return error_id


INTERNAL_MESSAGE = "internal error; the advisor could not answer this request"


def _validation_message(error: RequestValidationError) -> str:
    """One line naming each bad field of a request, without echoing large inputs back."""
    parts = []
    for item in error.errors():
        if item.get("type") == "json_invalid":
            return "the request body is not valid JSON"
        where = ".".join(str(p) for p in item.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {item.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


ERROR_STATUS_TEXT: dict[str, str] = {
    "408": "The request body did not arrive in time (code request_timeout).",
    "413": "Request body too large (code body_too_large).",
    "422": "Invalid input (code invalid_input and friends).",
    "429": "Rate limit reached (code rate_limited); see Retry-After.",
    "503": "Not ready, or the offers catalog is unavailable (codes not_ready, catalog_unavailable).",
}


def document_errors(schema: dict) -> dict:
    """Make the published schema say what the middleware and handlers really answer: every error is JSON
    (also on the streaming route), and each operation lists the error statuses it can get."""
    ref = {"$ref": "#/components/schemas/ErrorResponse"}
    for path, operations in schema.get("paths", {}).items():
        for _method, operation in operations.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            responses = operation["responses"]
            for status, response in responses.items():
                if status[:1] in "45" and isinstance(response, dict):
                    response["content"] = {"application/json": {"schema": ref}}
            wanted = ["422"]
            if "requestBody" in operation:
                wanted += ["408", "413"]
            if path.startswith("/api/"):
                wanted += ["429", "503"]
            for status in wanted:
                responses.setdefault(
                    status, {"description": ERROR_STATUS_TEXT[status], "content": {"application/json": {"schema": ref}}}
                )
    return schema


def install_error_handlers(app: FastAPI) -> None:
    """Register handlers so that every expected failure becomes an ErrorResponse (CatchAll covers the rest), and
    document those errors in the OpenAPI schema."""
    build_schema = app.openapi

    def openapi() -> dict:
        """The app's schema with its error responses documented as they are sent."""
        if app.openapi_schema is None:
            app.openapi_schema = document_errors(build_schema())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, error: ApiError) -> JSONResponse:
        """Errors the app raises on purpose."""
        return error_response(error.status, error.code, error.message, error.headers)

    @app.exception_handler(RequestValidationError)
    async def _request_validation(request: Request, error: RequestValidationError) -> JSONResponse:
        """Bodies and parameters that do not match the schema."""
        return error_response(422, "invalid_input", _validation_message(error))

    @app.exception_handler(ValidationError)
    async def _model_validation(request: Request, error: ValidationError) -> JSONResponse:
        """A model built inside an endpoint from user input was rejected."""
        return error_response(422, "invalid_input", describe_validation_error(error))

    @app.exception_handler(ValueError)
    async def _value_error(request: Request, error: ValueError) -> JSONResponse:
        """The tools and the advisor raise ValueError for bad input, with a clear message."""
        return error_response(422, "invalid_input", str(error) or "invalid input")

    @app.exception_handler(UserError)
    async def _user_error(request: Request, error: UserError) -> JSONResponse:
        """The CLI-style user errors some shared helpers raise."""
        return error_response(422, "invalid_input", str(error) or "invalid input")

    @app.exception_handler(CatalogError)
    async def _catalog_error(request: Request, error: CatalogError) -> JSONResponse:
        """The offers catalog cannot be read (damaged, missing, unwritable folder): 503, one line."""
        return error_response(
            503, "catalog_unavailable", str(error) or "the offers catalog is unavailable", {"Retry-After": "60"}
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        """Starlette's own errors: unknown paths, wrong methods, and friends. A body FastAPI cannot parse (bytes that
        are not UTF-8 JSON) is a 422 invalid_input like any other bad body, not an undocumented 400."""
        if error.status_code == 400 and request.method in ("POST", "PUT", "PATCH"):
            return error_response(422, "invalid_input", "the request body is not valid JSON")
        code = STATUS_CODES.get(error.status_code, "http_error")
        message = error.detail if isinstance(error.detail, str) else code.replace("_", " ")
        return error_response(error.status_code, code, message, dict(error.headers or {}))
