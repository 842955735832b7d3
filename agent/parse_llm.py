"""LLM parsing of a chat message into JobSpec fields through the openai client, for OpenAI and compatible servers.

Order (servers differ, see shared/reference/agent-stack.md §2): strict JSON schema via `chat.completions.parse`; if
the server rejects it (4xx) or the answer does not validate, JSON mode with the schema in the prompt; otherwise the
caller falls back to the offline parser. Every answer is validated by pydantic, model names must resolve in the model
registry and GPU names in the GPU table, or they are dropped.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

import openai
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

import prompts
from contract.jobspec import JobSpec
from tools.models import lookup

try:
    from tools.gpus import canonical_gpu_name
except ImportError:  # pragma: no cover - only while tools/gpus.py is missing
    def canonical_gpu_name(raw: str) -> str | None:  # type: ignore[misc]
        """Fallback while the GPU table is missing: no GPU is recognised."""
        return None

DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_TIMEOUT_S = 20.0


def _fields_model() -> type[BaseModel]:
    """The JobSpec fields an LLM fills: all of JobSpec but `language`, with the same types and limits."""
    fields: dict[str, Any] = {name: (info.annotation, info) for name, info in JobSpec.model_fields.items()
                              if name != "language"}
    return create_model("JobFields", __config__=ConfigDict(extra="forbid"), **fields)


JobFields = _fields_model()


@dataclass(frozen=True, kw_only=True)
class LlmAnswer:
    """What the LLM path produced: a validated spec and its stated fields, or the reason it failed."""

    spec: JobSpec | None = None
    mentioned: list[str] = field(default_factory=list)
    error: str | None = None
    mode: str | None = None
    """'json_schema' or 'json_object': which request produced the answer."""


def llm_configured() -> bool:
    """True when OPENAI_API_KEY or OPENAI_BASE_URL is set (and GPU_ADVISOR_OFFLINE is not)."""
    if os.environ.get("GPU_ADVISOR_OFFLINE", "").strip() not in ("", "0", "false"):
        return False
    return bool(os.environ.get("OPENAI_API_KEY", "").strip() or os.environ.get("OPENAI_BASE_URL", "").strip())


def model_name() -> str:
    """The chat model to use: GPU_ADVISOR_MODEL, else the default."""
    return os.environ.get("GPU_ADVISOR_MODEL") or DEFAULT_MODEL


def make_client(timeout_s: float | None = None) -> openai.OpenAI:
    """An openai client from the environment: short timeout, no retries (a chat turn must not hang)."""
    timeout = timeout_s if timeout_s is not None else float(os.environ.get("GPU_ADVISOR_LLM_TIMEOUT", DEFAULT_TIMEOUT_S))
    return openai.OpenAI(api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",
                         base_url=os.environ.get("OPENAI_BASE_URL") or None, timeout=timeout, max_retries=0)


def _messages(text: str, language: str, json_mode: bool) -> list[dict[str, str]]:
    """System prompt (plus the schema in JSON mode) and the user's message."""
    system = prompts.load("parse_system.txt")
    if json_mode:
        schema = json.dumps(JobFields.model_json_schema(), ensure_ascii=False)
        system += "\n" + prompts.load("parse_json_mode.txt").replace("{schema}", schema)
    return [{"role": "system", "content": system},
            {"role": "user", "content": f"Message (language: {language}):\n{text}"}]


def _clean(fields: BaseModel, language: str) -> tuple[JobSpec, list[str]]:
    """Resolve model and GPU names, validate into JobSpec, and list the fields the answer set."""
    data = fields.model_dump()
    if data.get("model"):
        arch = lookup(str(data["model"]))
        data["model"] = arch.id if arch is not None and not arch.approximate else None
    if data.get("gpu"):
        data["gpu"] = canonical_gpu_name(str(data["gpu"]))
    spec = JobSpec.model_validate({**data, "language": language})
    mentioned = [name for name in JobFields.model_fields if getattr(spec, name) is not None]
    return spec, mentioned


def _strip_fence(content: str) -> str:
    """Remove a ```json fence some servers wrap JSON-mode answers in."""
    match = re.fullmatch(r"\s*```(?:json)?\s*(.*?)\s*```\s*", content, re.DOTALL)
    return match.group(1) if match else content


def _json_mode(client: openai.OpenAI, model: str, text: str, language: str) -> LlmAnswer:
    """Second try: plain JSON mode with the schema in the prompt."""
    completion = client.chat.completions.create(model=model, messages=_messages(text, language, True),
                                                response_format={"type": "json_object"}, temperature=0)
    message = completion.choices[0].message
    if getattr(message, "refusal", None):
        return LlmAnswer(error="the LLM refused to answer")
    fields = JobFields.model_validate_json(_strip_fence(message.content or ""))
    spec, mentioned = _clean(fields, language)
    return LlmAnswer(spec=spec, mentioned=mentioned, mode="json_object")


def parse_with_llm(text: str, language: str, *, client: openai.OpenAI | None = None, model: str | None = None,
                   timeout_s: float | None = None) -> LlmAnswer:
    """Ask the configured LLM for JobSpec fields; never raises, failures come back as `error`."""
    client = client or make_client(timeout_s)
    model = model or model_name()
    try:
        try:
            completion = client.chat.completions.parse(model=model, messages=_messages(text, language, False),
                                                       response_format=JobFields, temperature=0)
            message = completion.choices[0].message
            if message.refusal:
                return LlmAnswer(error="the LLM refused to answer")
            if message.parsed is None:
                raise ValueError("empty structured answer")
            spec, mentioned = _clean(message.parsed, language)
            return LlmAnswer(spec=spec, mentioned=mentioned, mode="json_schema")
        except (openai.BadRequestError, openai.UnprocessableEntityError, openai.NotFoundError):
            return _json_mode(client, model, text, language)
        except (ValidationError, ValueError, json.JSONDecodeError):
            return _json_mode(client, model, text, language)
    except openai.APITimeoutError:
        return LlmAnswer(error="the LLM timed out")
    except openai.APIStatusError as error:
        return LlmAnswer(error=f"the LLM server answered HTTP {error.status_code}")
    except openai.APIConnectionError:
        return LlmAnswer(error="could not reach the LLM server")
    except (openai.LengthFinishReasonError, openai.ContentFilterFinishReasonError):
        return LlmAnswer(error="the LLM answer was cut off or filtered")
    except (ValidationError, ValueError, json.JSONDecodeError):
        return LlmAnswer(error="the LLM answer was not a valid job spec")
    except openai.OpenAIError as error:
        return LlmAnswer(error=f"LLM error ({type(error).__name__})")
