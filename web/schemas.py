"""Request and response models of the HTTP API (the boundary; the advisor's own result is passed through)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from contract.jobspec import JobSpec
from contract.languages import Language

THREAD_ID_PATTERN = r"^[A-Za-z0-9_.:-]{1,128}$"
THREAD_TOKEN_PATTERN = r"^[A-Za-z0-9_-]{1,128}$"
CHANGEABLE = sorted(name for name in JobSpec.model_fields if name != "language")
"""The job fields a turn's `changes` may name (what Advisor accepts)."""


def _inlined(node: Any, definitions: dict[str, Any]) -> Any:
    """A JSON schema with its local $refs replaced by the definitions they name."""
    if isinstance(node, dict):
        if "$ref" in node:
            return _inlined(definitions[node["$ref"].rsplit("/", 1)[-1]], definitions)
        return {key: _inlined(value, definitions) for key, value in node.items()}
    if isinstance(node, list):
        return [_inlined(item, definitions) for item in node]
    return node


def changes_schema() -> dict[str, Any]:
    """What `changes` accepts: JobSpec's fields but language, each as JobSpec validates it (null clears one)."""
    spec = JobSpec.model_json_schema()
    fields = {name: _inlined(spec["properties"][name], spec.get("$defs", {})) for name in CHANGEABLE}
    return {
        "properties": {name: {k: v for k, v in prop.items() if k != "default"} for name, prop in fields.items()},
        "additionalProperties": False,
    }


HARD_MAX_MESSAGE_CHARS = 100_000
"""Schema ceiling; the configured (smaller) limit is checked with its own error code."""

CHAT_EXAMPLES = {
    "italian": {
        "summary": "A job in Italian",
        "value": {"message": "QLoRA su Llama 3 8B, budget 50 euro, vanno bene le spot?", "language": "it"},
    },
    "follow_up": {
        "summary": "A follow-up in the same conversation",
        "value": {
            "message": "e con 2 GPU?",
            "thread_id": "3f6c2a9e0b1d4c58a7e2f0c4d9b81a6e",
            "thread_token": "q3ZcT1n0m8yXfV2bLrJ5sWk9HdGpAe7uQi4oCzRtYxM",
        },
    },
    "english": {
        "summary": "A job in English",
        "value": {
            "message": "Full fine-tune of Mistral 7B on 20k examples, deadline 12 hours, no spot",
            "language": "en",
        },
    },
}


class ChatRequest(BaseModel):
    """One user turn: the message, and the conversation it continues."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "anyOf": [  # what checked_chat_request enforces
                {"properties": {"message": {"pattern": r"\S"}}},
                {"required": ["changes"], "properties": {"changes": {"type": "object", "minProperties": 1}}},
                {"required": ["prefer"], "properties": {"prefer": {"not": {"type": "null"}}}},
            ]
        },
    )

    message: str = Field(max_length=HARD_MAX_MESSAGE_CHARS, description="What the user wrote, in it, id or en.")
    thread_id: str | None = Field(
        default=None,
        pattern=THREAD_ID_PATTERN,
        description="Continue this conversation (an id the server returned); omit to "
        "start a new one. Someone else's thread is 404.",
    )
    thread_token: str | None = Field(
        default=None,
        pattern=THREAD_TOKEN_PATTERN,
        description="The thread's capability token, returned with thread_id; needed "
        "with thread_id unless the API key that started it is sent.",
    )
    language: Language | None = Field(default=None, description="Answer in this language; omit to detect it.")
    prefer: Literal["cost", "speed"] | None = Field(
        default=None, description="Recommend the cheapest or the fastest fitting offer first."
    )
    changes: dict[str, Any] | None = Field(
        default=None,
        description="JobSpec fields to change on the thread's "
        'current job, e.g. {"interruptible_ok": '
        "false}; the message may then be empty.",
        json_schema_extra=changes_schema(),
    )


class ChatResult(BaseModel):
    """The advisor's answer: the same JSON as `recommend --json`, plus thread_id (more keys may appear)."""

    model_config = ConfigDict(extra="allow")

    thread_id: str = Field(description="Pass it back to continue the conversation.")
    thread_token: str | None = Field(
        default=None, description="Pass it back with thread_id; keep it secret (it opens the conversation)."
    )
    language: Language
    intent: str = Field(description="job_request, follow_up, faq, out_of_scope, injection or ask_back.")
    answer: str = Field(description="Text in the user's language: paragraphs, '- ' bullets, **bold**, [n] markers.")
    spec: dict[str, Any] | None = None
    missing: list[str] = Field(default_factory=list)
    estimate: dict[str, Any] | None = None
    topology: dict[str, Any] | None = None
    offers: list[dict[str, Any]] = Field(default_factory=list)
    alternatives: dict[str, Any] | None = None
    citations: list[dict[str, Any]] = Field(default_factory=list)
    notes: list[Any] = Field(default_factory=list)
    parser: str | None = None


class FaqRequest(BaseModel):
    """A why/how question for the knowledge base."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(
        min_length=1, max_length=HARD_MAX_MESSAGE_CHARS, examples=["Posso usare le istanze spot per il fine-tuning?"]
    )
    language: Language | None = Field(default=None, description="Answer in this language; omit to detect it.")


class Health(BaseModel):
    """What GET /healthz reports (200 when ready, 503 when the conversation threads cannot be written)."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["ok", "unavailable"]
    version: str
    advisor: bool = Field(description="True once the advisor is loaded and ready.")
    storage: bool | None = Field(
        default=None,
        description="Whether a turn can be saved now (a small write to the "
        "threads database); null while the advisor loads.",
    )
    reason: str | None = Field(default=None, description="Why the storage cannot be written (one line).")


def publish_message_limit(app: Any, limit: int) -> None:
    """Make /openapi.json give the configured message limit as ChatRequest.message's maxLength (the schema then says
    what the server accepts; the model keeps the hard ceiling)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        """The app's schema with the configured limit."""
        schema = build()
        message = schema.get("components", {}).get("schemas", {}).get("ChatRequest", {}).get("properties", {})
        if "message" in message:
            message["message"]["maxLength"] = min(limit, HARD_MAX_MESSAGE_CHARS)
        return schema

    app.openapi = openapi
