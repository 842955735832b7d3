"""Optional LLM phrasing of a drafted answer: the model may only rephrase, and every number must survive intact.

Offline (no LLM configured) the draft is the answer. With an LLM, the reply streams to the caller as it arrives;
if the call fails, or the reply holds a number that the draft does not, the draft is used and a note says so.
"""

from __future__ import annotations

import re

import openai

import prompts
from agent import writing
from agent.parse_llm import llm_configured, make_client, model_name

LANGUAGE_NAMES = {"it": "Italian", "id": "Indonesian", "en": "English"}
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def numbers_in(text: str) -> set[str]:
    """Every number written in a text, as digits only (separators dropped) so '1.234,5' and '1,234.5' agree."""
    return {re.sub(r"[.,]", "", match) for match in _NUMBER.findall(text)}


def numbers_preserved(candidate: str, draft: str) -> bool:
    """True when every number in `candidate` also appears in `draft`."""
    return numbers_in(candidate) <= numbers_in(draft)


def _emit(chunk: str) -> None:
    """Stream a text delta to a streaming caller, if there is one."""
    try:
        from langgraph.config import get_stream_writer

        get_stream_writer()({"type": "delta", "text": chunk})
    except RuntimeError:
        pass


def phrase_answer(draft: str, language: str) -> tuple[str, str | None]:
    """The answer to show and an optional note: the LLM's rephrasing when it is safe, else the draft."""
    if not llm_configured():
        return draft, None
    system = prompts.load("phrase_system.txt").replace("{language_name}", LANGUAGE_NAMES.get(language, "English"))
    parts: list[str] = []
    try:
        stream = make_client().chat.completions.create(
            model=model_name(), temperature=0, stream=True,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": draft}])
        for event in stream:
            if not event.choices:
                continue
            chunk = event.choices[0].delta.content or ""
            if chunk:
                parts.append(chunk)
                _emit(chunk)
    except (openai.OpenAIError, ValueError, AttributeError, IndexError):
        return draft, writing.fixed_text("llm_fallback_note", language)
    text = "".join(parts).strip()
    if not text or not numbers_preserved(text, draft):
        return draft, writing.fixed_text("llm_fallback_note", language)
    return text, None
