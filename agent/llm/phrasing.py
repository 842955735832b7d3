"""Optional LLM phrasing of a drafted answer: the model may only reword it, and every claim is checked.

Offline (no LLM configured) the draft is the answer. With an LLM, its reply is read paragraph by paragraph and each
paragraph is checked against the draft (agent/claims/check.py) BEFORE it is streamed as a `delta`; nothing is streamed
until the text so far carries the draft's verdict. When the call fails or times out, or any claim does not hold,
the draft is the answer and a localised note says why; a streaming caller then gets the draft's text as deltas
if nothing was streamed yet (the `final` event's answer is always the authority).
"""

from __future__ import annotations

import json
from functools import cache

import prompts
from agent.claims import check_fragment, check_rewording, verdict_problems
from agent.llm import client as llm
from agent.llm.client import llm_configured
from agent.llm.lazy_openai import openai  # imported on first use: not on the offline path
from agent.stream_events import emit
from contract.languages import NAMES

LANGUAGE_NAMES = NAMES


@cache
def _notes(language: str) -> dict[str, str]:
    """The LLM-path notes in one language (prompts/<lang>/llm_notes.json)."""
    return json.loads(prompts.load_in(language if language in LANGUAGE_NAMES else "en", "llm_notes.json"))


def note(key: str, language: str) -> str:
    """One localised LLM-path note or answer: unavailable, unverified, needs_llm, tool_unverified, tool_failed..."""
    return _notes(language)[key]


def _emit(chunk: str) -> None:
    """Stream a verified text delta to a streaming caller, if there is one."""
    emit({"type": "delta", "text": chunk})


class _VerifiedStream:
    """Collects the LLM's paragraphs and streams each one once it, and the verdict so far, check out."""

    def __init__(self, draft: str, language: str) -> None:
        self.draft, self.language = draft, language
        self.paragraphs: list[str] = []
        self.sent = 0
        self.failed = False

    def add(self, paragraph: str) -> None:
        """Check one finished paragraph; stream what is verified so far."""
        paragraph = paragraph.strip()
        if not paragraph or self.failed:
            return
        if not check_fragment(paragraph, self.draft, self.language).ok:
            self.failed = True
            return
        self.paragraphs.append(paragraph)
        if not verdict_problems(self.text, self.draft, self.language):
            for index in range(self.sent, len(self.paragraphs)):
                _emit(("\n\n" if index else "") + self.paragraphs[index])
            self.sent = len(self.paragraphs)

    @property
    def text(self) -> str:
        """The verified paragraphs as one text."""
        return "\n\n".join(self.paragraphs)


def phrase_answer(draft: str, language: str) -> tuple[str, str | None]:
    """The answer to show and an optional note: the LLM's rewording when every claim holds, else the draft."""
    if not llm_configured():
        return draft, None
    if llm.breaker.is_open:  # skipped: said once (the turn's notes are deduplicated if the parse said it too)
        _emit(draft)
        return draft, note("unavailable", language)
    system = prompts.load("phrase_system.txt").replace("{language_name}", LANGUAGE_NAMES.get(language, "English"))
    verified = _VerifiedStream(draft, language)
    buffer = ""
    try:
        for chunk in llm.stream_text([{"role": "system", "content": system}, {"role": "user", "content": draft}]):
            buffer += chunk
            while "\n\n" in buffer and not verified.failed:
                paragraph, buffer = buffer.split("\n\n", 1)
                verified.add(paragraph)
            if verified.failed:
                break
        verified.add(buffer)
    except llm.LlmIncomplete:
        return _fallback(draft, verified, note("incomplete", language))
    except (llm.LlmUnavailable, openai.OpenAIError, ValueError, AttributeError, IndexError):
        return _fallback(draft, verified, note("unavailable", language))
    if not verified.failed and not verified.paragraphs:  # no text came: nothing was rejected
        return _fallback(draft, verified, note("unavailable", language))
    if verified.failed or not check_rewording(verified.text, draft, language).ok:
        return _fallback(draft, verified, note("unverified", language))
    return verified.text, None


def with_note(state: dict, phrase_note: str | None, language: str) -> list[str]:
    """The turn's notes with one LLM note at most: 'the LLM was unavailable' is not repeated when this turn's parse
    already fell back offline and said so; when the phrasing itself answered (its text shown, or rejected, or cut
    short), its outcome is what the answer's text went through, and the parse's fallback note is dropped (it would
    say the answer was written offline beside a note about the LLM's wording)."""
    from agent.writing import fixed_text

    notes = list(state.get("notes") or [])
    if not llm_configured():
        return notes
    if phrase_note == note("unavailable", language) and state.get("fallback_reason"):
        return notes
    parse_note = fixed_text("llm_fallback_note", language)
    notes = [n for n in notes if n != parse_note]
    return notes + ([phrase_note] if phrase_note and phrase_note not in notes else [])


def _fallback(draft: str, verified: _VerifiedStream, why: str) -> tuple[str, str]:
    """The draft with a note; streamed as deltas when no LLM text was streamed before."""
    if verified.sent == 0:
        _emit(draft)
    return draft, why
