"""Claim checking for LLM text: every fact the LLM writes must be one the source (draft or tool results) holds.

A claim is a number (digits or words, it/id/en) with its unit (currency and per-hour, GiB, hours, %, GPUs, tokens)
and the fact it is attached to (the nearest fact word in its clause: total, budget, per GPU, weights...), or a
named thing: provider, GPU, instance or other identifier, region, currency, an absolute promise ("never"). The
rewording check also wants the draft's verdict (its first paragraph's claims) back in the LLM text.
"""

from __future__ import annotations

from agent.claims.reading import (
    MIN_CONTENT_WORDS,
    MIN_OVERLAP,
    ClaimCheck,
    Claims,
    extract,
    matches,
)


def _number_problems(text: Claims, source: Claims, tolerance: bool) -> list[str]:
    """Numbers absent from the source, or attached there to a different fact."""
    problems = []
    for claim in text.numbers:
        found = [s for s in source.numbers if matches(claim, s, tolerance)]
        if not found:
            problems.append(f"number {claim.text!r} is not in the source")
            continue
        if claim.fact is None or any(s.fact == claim.fact for s in found):
            continue
        elsewhere = [s for s in source.numbers if s.fact == claim.fact and (claim.kind or s.kind) in (None, s.kind)]
        if elsewhere or not any(s.fact is None for s in found):
            problems.append(f"number {claim.text!r} is attached to '{claim.fact}', which the source does not say")
    return problems


def _name_problems(text: Claims, source: Claims, source_text: str) -> list[str]:
    """Named things, absolute promises and invented providers that the source does not hold."""
    problems = [
        f"{name} is not in the source"
        for name in sorted(text.names - source.names)
        if not (name.startswith("id:") and name[3:] in source_text.lower())
    ]
    problems += [f"'{word}' is not in the source" for word in sorted(text.absolutes - source.absolutes)]
    problems += [f"unknown name '{name}'" for name in text.invented if name not in source.vocabulary]
    return problems


def check_rewording(candidate: str, draft: str, language: str) -> ClaimCheck:
    """Whether `candidate` says only what `draft` says (same facts, same attachments) and keeps its verdict."""
    problems = check_fragment(candidate, draft, language).problems
    if not problems:
        problems = verdict_problems(candidate, draft, language)
    return ClaimCheck(not problems, tuple(problems))


def check_fragment(candidate: str, draft: str, language: str) -> ClaimCheck:
    """Claims of part of a rewording (a paragraph while streaming): all in the draft, every sentence backed by a
    draft sentence (agent/claims/support.py), no verdict needed."""
    from agent.claims.support import draft_problems

    text, source = extract(candidate, language), extract(draft, language)
    problems = _number_problems(text, source, tolerance=False) + _name_problems(text, source, draft)
    problems += draft_problems(candidate, draft, language)
    return ClaimCheck(not problems, tuple(problems))


def verdict_problems(candidate: str, draft: str, language: str) -> tuple[str, ...]:
    """What of the draft's verdict (its first paragraph's claims) the candidate lost."""
    headline = extract(draft.strip().split("\n\n")[0], language)
    text = extract(candidate, language)
    missing = [
        f"verdict number {n.text!r} is missing"
        for n in headline.numbers
        if not any(matches(c, n, False) for c in text.numbers)
    ]
    missing += [
        f"verdict {name} is missing"
        for name in sorted(headline.names - text.names)
        if not (name.startswith("id:") and name[3:] in candidate.lower())
    ]
    if not headline.numbers and not headline.names:
        missing += content_problems(candidate, draft, language)
    return tuple(missing)


def content_problems(candidate: str, source: str, language: str) -> list[str]:
    """A content-free or off-source reply: too few content words, or too few of them taken from the source."""
    words = extract(candidate, language).words
    known = set(extract(source, language).words)
    if len(words) < MIN_CONTENT_WORDS:
        return ["the reply has almost no content"]
    shared = sum(1 for word in words if word in known) / len(words)
    return [] if shared >= MIN_OVERLAP else [f"only {shared:.0%} of the reply's words come from the source"]


def check_grounded(
    text: str,
    sources: str,
    language: str,
    *,
    source_language: str | None = None,
    extra_names: frozenset[str] = frozenset(),
) -> ClaimCheck:
    """Whether every claim in `text` is in `sources` (tool results or cited text; numbers may be rounded as shown).

    `source_language` reads the sources' digits ('en' for JSON tool results); default: `language`. `extra_names`
    are names allowed without being in the sources (e.g. 'currency:USD' for USD prices in JSON)."""
    claims, source = extract(text, language), extract(sources, source_language or language)
    source = Claims(
        source.numbers, source.names | extra_names, source.absolutes, source.invented, source.words, source.vocabulary
    )
    problems = _number_problems(claims, source, tolerance=True) + _name_problems(claims, source, sources)
    return ClaimCheck(not problems, tuple(problems))
