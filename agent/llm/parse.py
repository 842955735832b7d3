"""LLM parsing of a chat message into JobSpec fields through the openai client, for OpenAI and compatible servers.

Order (servers differ, see shared/reference/agent-stack.md §2): strict JSON schema via `chat.completions.parse`; if
the server rejects it (any non-2xx but 429: llama.cpp's server answers 500) or the answer does not validate, JSON
mode with the schema in the prompt; if the server rejects that too, the same prompt with no response_format;
otherwise the caller falls back to the offline parser. All tries share one deadline (agent/llm/client.py). The answer is
validated by pydantic (ranges), and a field is kept only when the user's own words support it
(agent/llm/parse_evidence.py): a number the message holds, a word that names the field. Unknown providers or GPUs the
user did name are not guessed at: the answer carries a clarifying question instead.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

import prompts
from agent.llm import client as llm
from agent.llm.client import llm_configured, model_name
from agent.llm.lazy_openai import openai  # imported on first use: not on the offline path
from agent.llm.parse_evidence import Evidence
from contract.jobspec import JobSpec

__all__ = ["JobFields", "LlmAnswer", "llm_configured", "make_client", "model_name", "parse_with_llm"]


def _fields_model() -> type[BaseModel]:
    """The JobSpec fields an LLM fills: all of JobSpec but `language`, with the same types and limits."""
    fields: dict[str, Any] = {
        name: (info.annotation, info) for name, info in JobSpec.model_fields.items() if name != "language"
    }
    return create_model("JobFields", __config__=ConfigDict(extra="forbid"), **fields)


JobFields = _fields_model()


@dataclass(frozen=True, kw_only=True)
class LlmAnswer:
    """What the LLM path produced: a validated spec and its supported fields, or the reason it failed."""

    spec: JobSpec | None = None
    mentioned: list[str] = field(default_factory=list)
    error: str | None = None
    mode: str | None = None
    """'json_schema', 'json_object' or 'plain' (no response_format): which request produced the answer."""
    dropped: list[str] = field(default_factory=list)
    """Fields the LLM filled that the message does not support (not used)."""
    clarify: str | None = None
    """A question for the user when they named a provider or GPU that is not known (localised)."""


def make_client(timeout_s: float | None = None) -> openai.OpenAI:
    """An openai client from the environment (no retries, short socket timeouts); see agent/llm/client.py."""
    return llm.make_client(timeout_s)


def _messages(text: str, language: str, json_mode: bool) -> list[dict[str, str]]:
    """System prompt (plus the schema in JSON mode) and the user's message."""
    system = prompts.load("parse_system.txt")
    if json_mode:
        schema = json.dumps(JobFields.model_json_schema(), ensure_ascii=False)
        system += "\n" + prompts.load("parse_json_mode.txt").replace("{schema}", schema)
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"Message (language: {language}):\n{text}"},
    ]


def _clean(fields: BaseModel, text: str, language: str) -> LlmAnswer:
    """Validate into JobSpec, keep the fields the message supports, and ask about unknown providers/GPUs."""
    data = {name: value for name, value in fields.model_dump().items() if value is not None}
    JobSpec.model_validate({**data, "language": language})  # ranges: a bad value rejects the whole answer
    evidence = Evidence(text, language)
    kept, dropped, unknown_providers, unknown_gpu = evidence.filter(data)
    spec = JobSpec.model_validate({**kept, "language": language})
    mentioned = [name for name in JobFields.model_fields if getattr(spec, name) is not None]
    return LlmAnswer(
        spec=spec, mentioned=mentioned, dropped=dropped, clarify=evidence.question(unknown_providers, unknown_gpu)
    )


def _strip_fence(content: str) -> str:
    """Remove a ```json fence some servers wrap JSON-mode answers in."""
    match = re.fullmatch(r"\s*```(?:json)?\s*(.*?)\s*```\s*", content, re.DOTALL)
    return match.group(1) if match else content


def _json_mode(client: openai.OpenAI, model: str, text: str, language: str) -> LlmAnswer:
    """Second try: plain JSON mode with the schema in the prompt; a server that rejects any response_format (a 4xx
    but 429, or a 5xx) gets the same prompt once more without one (third try, mode 'plain')."""
    mode, extra = "json_object", {"response_format": {"type": "json_object"}}
    try:
        completion = client.chat.completions.create(
            model=model, messages=_messages(text, language, True), temperature=0, **extra
        )
    except openai.APIStatusError as error:
        if error.status_code == 429:
            raise
        mode = "plain"
        completion = client.chat.completions.create(
            model=model, messages=_messages(text, language, True), temperature=0
        )
    message = completion.choices[0].message
    if getattr(message, "refusal", None):
        return LlmAnswer(error="the LLM refused to answer")
    answer = _clean(JobFields.model_validate_json(_strip_fence(message.content or "")), text, language)
    return LlmAnswer(**{**answer.__dict__, "mode": mode})


def _ask(client: openai.OpenAI, model: str, text: str, language: str) -> LlmAnswer:
    """Structured output first, JSON mode when the server rejects it or the answer does not validate."""
    try:
        completion = client.chat.completions.parse(
            model=model, messages=_messages(text, language, False), response_format=JobFields, temperature=0
        )
        message = completion.choices[0].message
        if message.refusal:
            return LlmAnswer(error="the LLM refused to answer")
        if message.parsed is None:
            raise ValueError("empty structured answer")
        answer = _clean(message.parsed, text, language)
        return LlmAnswer(**{**answer.__dict__, "mode": "json_schema"})
    except openai.APIStatusError as error:  # a server without strict schemas may say 400, 404, 422 or even 500
        if error.status_code == 429:
            raise
        return _json_mode(client, model, text, language)
    except (ValidationError, ValueError, json.JSONDecodeError):
        return _json_mode(client, model, text, language)


def parse_with_llm(
    text: str,
    language: str,
    *,
    client: openai.OpenAI | None = None,
    model: str | None = None,
    timeout_s: float | None = None,
) -> LlmAnswer:
    """Ask the configured LLM for JobSpec fields within one deadline; never raises, failures come back as `error`."""
    model = model or model_name()
    try:
        return llm.call(lambda fresh: _ask(client or fresh, model, text, language), deadline_s=timeout_s)
    except llm.LlmUnavailable as error:
        return LlmAnswer(error=error.reason)
    except openai.APITimeoutError:
        return LlmAnswer(error="the LLM timed out")
    except openai.APIStatusError as error:
        return LlmAnswer(error=f"the LLM server answered HTTP {error.status_code}")
    except openai.APIConnectionError:
        return LlmAnswer(error="could not reach the LLM server")
    except (openai.LengthFinishReasonError, openai.ContentFilterFinishReasonError):
        return LlmAnswer(error="the LLM answer was cut off or filtered")
    except (ValidationError, ValueError, json.JSONDecodeError, IndexError, AttributeError):
        return LlmAnswer(error="the LLM answer was not a valid job spec")
    except openai.OpenAIError as error:
        return LlmAnswer(error=f"LLM error ({type(error).__name__})")
