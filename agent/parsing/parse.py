"""Chat message -> JobSpec: language, offline parse, optional LLM parse, and merging a follow-up into the current job.

`parse_message` is what the graph and the CLI call. Offline (default) it runs the deterministic parser. With an LLM
configured (OPENAI_API_KEY and/or OPENAI_BASE_URL) it asks the LLM too and combines both: values the offline parser
read from the text win, the LLM only fills fields the offline parser did not find (numbers such as "70B" or
"Rp 5.000.000" are read more reliably by rules than by a small model). Any LLM failure falls back to offline and the
result says why.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent.language import LanguageGuess, detect_language, untangled
from agent.parsing.offline import read_message
from agent.parsing.rules.scan import MAX_PLAIN_DIGITS
from contract.jobspec import JobSpec

SPEC_FIELDS: tuple[str, ...] = tuple(name for name in JobSpec.model_fields if name != "language")
LINKED_FIELDS: tuple[frozenset[str], ...] = (frozenset({"model", "params_b"}),)
"""Fields that describe one thing: naming one of them in a follow-up replaces the others too."""


class ParseResult(BaseModel):
    """A parsed message: the spec, which fields the message itself set, and how it was parsed.

    Fields: `spec` (the JobSpec), `mentioned` (fields the message stated), `parser` ('offline' or 'llm'),
    `fallback_reason` (why an LLM answer was not used), `language` (the detected language), `assumptions`
    (readings the parser had to assume), `unknown_model` (a model name matching no registry model; its stated size
    is used with a generic decoder), `model_guess` (the name as the user wrote it when `spec.model` was matched
    fuzzily rather than exactly, e.g. "Mistrall 7B" -> mistral-7b: the answer should ask "did you mean ...?"),
    `clarify` (the LLM parser's question about an unknown provider or GPU).
    """

    model_config = ConfigDict(frozen=True)

    spec: JobSpec
    mentioned: list[str] = Field(description="JobSpec fields the message stated, in JobSpec field order.")
    parser: Literal["offline", "llm"] = Field(description="'llm' when an LLM answer contributed, else 'offline'.")
    fallback_reason: str | None = Field(default=None, description="Why the LLM answer was not used, if it was tried.")
    language: LanguageGuess
    assumptions: list[str] = Field(default_factory=list, description="Readings the parser had to assume.")
    unknown_model: str | None = Field(
        default=None,
        description="A model name the registry does not know (its stated size is used with a generic decoder).",
    )
    model_guess: str | None = Field(
        default=None,
        description="The model name as written when spec.model was a fuzzy "
        "match (a misspelling), not an exact one: say 'did you "
        "mean ...?'.",
    )
    clarify: str | None = Field(
        default=None,
        description="The LLM parser's question about a provider or GPU it "
        "does not know, in the user's language; asked back.",
    )
    example_tokens: int | None = Field(
        default=None,
        description="One example's length the message states without an example count ('the examples are ~8k "
        "tokens each'): with a job's example count, the data set's size.",
    )
    text_bytes: float | None = Field(
        default=None,
        description="The bytes of text a data set was sized in ('2 GB of text') when dataset_tokens was read from "
        "them: the answer says how many tokens that was taken to be.",
    )
    refused: list[dict[str, str]] = Field(
        default_factory=list,
        description="Values read for a field but not used ({field, value, reason}): said in the answer, never applied.",
    )


def _ordered(names: set[str]) -> list[str]:
    """Field names in JobSpec order."""
    return [name for name in SPEC_FIELDS if name in names]


def _as_written(name: str | None, text: str) -> str | None:
    """A name found in the prepared (lower-cased) text, as the user wrote it in `text`."""
    if not name:
        return None
    found = re.search(r"[\s_-]*".join(map(re.escape, re.split(r"[\s_-]+", name))), text, re.IGNORECASE)
    return found.group(0) if found else name


def _offline(text: str, language: str) -> tuple[JobSpec, list[str], list[str], dict[str, str]]:
    """Offline parse into (JobSpec, mentioned fields, assumptions, notes); values that fail validation are dropped."""
    scan = read_message(text, language)
    values, assumptions = scan.values, scan.assumptions
    kept: dict[str, Any] = {}
    for name, value in values.items():
        try:
            JobSpec.model_validate({"language": language, name: value})
        except ValidationError:
            scan.refuse(name, _written_value(value), "out_of_range")
            continue
        kept[name] = value
    notes: dict[str, Any] = {key: _as_written(value, text) or value for key, value in scan.notes.items()}
    notes["example_tokens"] = scan.example_tokens
    notes["text_bytes"] = scan.text_bytes
    notes["refused"] = [{"field": f, "value": v, "reason": r} for f, v, r in scan.refused]
    return JobSpec.model_validate({"language": language, **kept}), _ordered(set(kept)), assumptions, notes


def _written_value(value: Any) -> str:
    """A refused value as the note shows it (a budget by its amount and currency)."""
    if isinstance(value, dict) and "amount" in value:  # the parser reads a budget as {amount, currency}
        return f"{value['amount']:g} {value.get('currency') or ''}".strip()
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**MAX_PLAIN_DIGITS:
        return f"{float(value):.6g}"  # 10^30 tokens: '1e+30', not 31 digits of float noise
    return f"{value:g}" if isinstance(value, float) else str(value)


def parse_message(
    text: str, *, lang: str | None = None, previous_language: str | None = None, use_llm: bool | None = None
) -> ParseResult:
    """Parse one chat message; `lang` forces the language, `use_llm` None means 'if one is configured'."""
    if not isinstance(text, str):
        raise ValueError("message must be text")
    guess = detect_language(text, explicit=lang, previous=previous_language)
    text = untangled(text)  # "2 epocsh": the word the parser listens for
    spec, mentioned, assumptions, notes = _offline(text, guess.language)
    unknown = notes.get("unknown_model") if "params_b" in mentioned and spec.model is None else None
    guess_name = notes.get("model_guess") if spec.model is not None else None
    from agent import llm as parse_llm

    if use_llm is None:
        use_llm = parse_llm.llm_configured()
    if not use_llm:
        return ParseResult(
            spec=spec,
            mentioned=mentioned,
            parser="offline",
            language=guess,
            assumptions=assumptions,
            unknown_model=unknown,
            model_guess=guess_name,
            refused=notes["refused"],
            example_tokens=notes.get("example_tokens"),
            text_bytes=notes.get("text_bytes"),
        )
    answer = parse_llm.parse_with_llm(text, guess.language)
    if answer.spec is None:
        return ParseResult(
            spec=spec,
            mentioned=mentioned,
            parser="offline",
            fallback_reason=answer.error,
            language=guess,
            assumptions=assumptions,
            unknown_model=unknown,
            model_guess=guess_name,
            refused=notes["refused"],
            example_tokens=notes.get("example_tokens"),
            text_bytes=notes.get("text_bytes"),
        )
    combined, combined_mentioned = combine(spec, set(mentioned), answer.spec, set(answer.mentioned))
    return ParseResult(
        spec=combined,
        mentioned=combined_mentioned,
        parser="llm",
        language=guess,
        assumptions=assumptions,
        unknown_model=unknown if combined.model is None else None,
        model_guess=guess_name if combined.model == spec.model else None,
        clarify=answer.clarify,
        refused=[r for r in notes["refused"] if r["field"] not in combined_mentioned],
        example_tokens=notes.get("example_tokens") if "dataset_tokens" not in combined_mentioned else None,
        text_bytes=notes.get("text_bytes") if "dataset_tokens" in mentioned else None,
    )


def combine(
    offline: JobSpec, offline_fields: set[str], llm: JobSpec, llm_fields: set[str]
) -> tuple[JobSpec, list[str]]:
    """Offline values win; the LLM fills fields the offline parser left empty (linked fields move together)."""
    data = offline.model_dump()
    taken = set(offline_fields)
    for group in LINKED_FIELDS:
        if group & offline_fields:
            taken |= group
    added = {name for name in llm_fields - taken}
    for name in added:
        data[name] = getattr(llm, name)
    return JobSpec.model_validate(data), _ordered(offline_fields | added)


def merge_spec(
    current: dict[str, Any] | JobSpec | None,
    update: dict[str, Any] | JobSpec,
    mentioned: list[str] | set[str] | None = None,
) -> tuple[JobSpec, list[str]]:
    """Apply a follow-up to the current job: only the fields the follow-up mentions change.

    `update` is a JobSpec or a partial dict; `mentioned` defaults to the non-null fields of `update`. Naming a model
    replaces a previously stated size and vice versa. Returns the merged spec and the fields that changed hands.
    """
    base = current.model_dump() if isinstance(current, JobSpec) else dict(current or {})
    new = update.model_dump() if isinstance(update, JobSpec) else dict(update)
    names = (
        set(mentioned) if mentioned is not None else {k for k, v in new.items() if v is not None and k in SPEC_FIELDS}
    )
    unknown = names - set(SPEC_FIELDS)
    if unknown:
        raise ValueError(f"unknown JobSpec field(s): {', '.join(sorted(unknown))}")
    for group in LINKED_FIELDS:
        if group & names:
            for name in group - names:
                base[name] = None
    for name in names:
        base[name] = new.get(name)
    base["language"] = new.get("language") or base.get("language") or "en"
    return JobSpec.model_validate(base), _ordered(names)
