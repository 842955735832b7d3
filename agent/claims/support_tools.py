"""Sentence-level support of a tool agent's answer: every sentence backed by the tool results it was given.

Tool results are JSON; each object is a record (its own scalars plus those of the objects around it), whose numbers
take their unit from the key ('billing_granularity_s' is seconds, 'price_per_hour' USD per hour, '*_gib' GiB), so
"60 minute minimum" does not pass for 60 s and "$1/h" does not pass on a GPU count of 1. On top of
agent/claims/support.py's rules (links, credentials, actions, entity-number pairs), a sentence must carry a claim the
results hold, and three facts are read for meaning: spot availability ("offers spot" / "no spot") and billing
granularity ("per second") against the provider's record, and "cheapest" against the lowest price among the
offers. Other comparisons cannot be read from records and are not shown. No tool result, no answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from agent.claims.reading import Number, extract, matches, provider_names
from agent.claims.support import (
    ENTITY,
    Unit,
    _tokens,
    binding_problems,
    blocked,
    content_words,
    has,
    make_unit,
    negated,
    order_family,
    segments,
    sentences,
    words,
)

MONEY_PER_HOUR = ("price_per_hour", "spot_price_per_hour", "peer_median_price")
NAME_KEYS = ("provider", "upstream_provider", "id", "display_name", "gpu", "accelerator_name")


def _kind(key: str) -> tuple[str | None, str | None, bool]:
    """(kind, currency, per_hour) of a number stored under `key`."""
    if key in MONEY_PER_HOUR:
        return "money", "USD", True
    if key.endswith(("_s", "_seconds")):
        return "seconds", None, False
    if key.endswith("_gib") or "_gib_" in key:
        return "mem", None, False
    if key.endswith("_hours") or key == "hours":
        return "hours", None, False
    if key in ("gpu_count", "gpus_per_node", "count", "min_gpu_count"):
        return "gpus", None, False
    if key.endswith("_usd"):
        return "money", "USD", False
    return None, None, False


def _records(value: Any, inherited: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every object of a JSON value, with the scalars of the objects around it."""
    if isinstance(value, list):
        for item in value:
            yield from _records(item, inherited)
    elif isinstance(value, dict):
        scalars = {**inherited, **{k: v for k, v in value.items() if not isinstance(v, (dict, list))}}
        yield scalars
        for child in value.values():
            if isinstance(child, (dict, list)):
                yield from _records(child, scalars)


def _unit(record: dict[str, Any]) -> Unit:
    """A record as a unit: typed numbers, named entities, and its text."""
    numbers: list[Number] = []
    entities: set[str] = set()
    for key, value in record.items():
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, (int, float)):
            numbers.append(Number(float(value), *_kind(key), None, repr(value)))
        elif isinstance(value, str):
            claims = extract(value, "en")
            entities |= {n for n in claims.names if n.startswith(ENTITY)}
            numbers += claims.numbers
            if key in NAME_KEYS and value.lower() in provider_names():
                entities.add("provider:" + provider_names()[value.lower()])
            if key == "instance_type":
                entities.add("id:" + value.lower())
    text = json.dumps(record, ensure_ascii=False)
    return Unit(text, frozenset(entities), tuple(numbers), tuple(_tokens(" ".join(map(str, record.values())))))


def tool_units(results: list[str]) -> tuple[tuple[Unit, ...], list[dict[str, Any]]]:
    """The records of every tool result, as units and as plain dicts."""
    records: list[dict[str, Any]] = []
    for result in results:
        try:
            records += list(_records(json.loads(result), {}))
        except json.JSONDecodeError:
            continue
    return tuple(_unit(r) for r in records), records


def _provider_of(record: dict[str, Any]) -> str | None:
    """The provider id a record is about."""
    for key in ("provider", "id"):
        value = str(record.get(key) or "").lower()
        if value in provider_names():
            return provider_names()[value]
    return None


def _named(segment: Unit, sentence: Unit, prefix: str) -> list[str]:
    """Entities of a kind named in the segment, else in its sentence, in the order written."""
    for unit in (segment, sentence):
        found = sorted(
            (n for n in unit.entities if n.startswith(prefix)),
            key=lambda n: unit.text.lower().find(n.split(":", 1)[1].lower()),
        )
        if found:
            return found
    return []


def fact_problems(segment: Unit, sentence: Unit, records: list[dict[str, Any]], language: str) -> list[str]:
    """Spot availability and billing granularity against each named provider's record."""
    lex, problems = words(language), []
    providers = [p.split(":", 1)[1] for p in _named(segment, sentence, "provider:")]
    facts = {
        (_provider_of(r), k): r[k]
        for r in records
        for k in ("spot_available", "billing_granularity_s")
        if k in r and r[k] is not None
    }
    if has(segment.tokens, lex["spot"]):
        claimed = not negated(segment.tokens, language)
        problems += [
            f"{p} spot availability is {facts[(p, 'spot_available')]}"
            for p in providers
            if (p, "spot_available") in facts and facts[(p, "spot_available")] != claimed
        ]
    if has(segment.tokens, lex["billing"]):
        for seconds, phrases in lex["granularity"].items():
            if has(segment.tokens, phrases):
                problems += [
                    f"{p} does not bill per {seconds} s"
                    for p in providers
                    if (p, "billing_granularity_s") in facts
                    and float(facts[(p, "billing_granularity_s")]) != float(seconds)
                ]
    return problems


def order_problems(segment: Unit, sentence: Unit, records: list[dict[str, Any]], language: str) -> list[str]:
    """'Cheapest' (or cheaper) must name the lowest-priced offer; other comparisons cannot be read from records."""
    problems = []
    for family in {family for family, _ in order_family(segment.tokens, language)}:
        if family != "cheap":
            problems.append(f"{segment.text[:60]!r}: the tool results do not compare that")
            continue
        gpus = {g.split(":", 1)[1] for g in _named(segment, sentence, "gpu:")}
        offers = [
            r
            for r in records
            if isinstance(r.get("price_per_hour"), (int, float))
            and _provider_of(r)
            and (not gpus or any(str(r.get(k)) in gpus for k in ("gpu", "accelerator_name")))
        ]
        if not offers:
            problems.append(f"{segment.text[:60]!r}: no offer in the tool results to compare")
            continue
        lowest = min(r["price_per_hour"] for r in offers)
        cheapest = {_provider_of(r) for r in offers if r["price_per_hour"] == lowest}
        providers = [p.split(":", 1)[1] for p in _named(segment, sentence, "provider:")]
        if providers and providers[0] in cheapest:
            continue
        price = Number(float(lowest), "money", "USD", True, None, repr(lowest))
        if not providers and any(matches(n, price, True) for n in segment.numbers):
            continue
        problems.append(f"{segment.text[:60]!r}: not the cheapest offer in the tool results")
    return problems


def tool_problems(text: str, results: list[str], language: str, *, allowed: frozenset[str] = frozenset()) -> list[str]:
    """Every sentence of a tool agent's answer checked against the tool results (see the module docstring)."""
    if not results:
        return ["no tool result backs the answer"]
    units, records = tool_units(results)
    numbers = [n for unit in units for n in unit.numbers]
    problems = blocked(text, "\n".join(results), language)
    for sentence in sentences(text):
        whole = make_unit(sentence, language)
        claims = extract(sentence, language)
        if (
            not whole.entities
            and not claims.numbers
            and not (claims.names - allowed)
            and content_words(whole.tokens, language)
        ):
            problems.append(f"the sentence {sentence[:60]!r} holds nothing from the tool results")
        problems += [
            f"number {n.text!r} is not in the tool results"
            for n in claims.numbers
            if not any(matches(n, m, True) for m in numbers)
        ]
        for piece in segments(sentence, language):
            segment = make_unit(piece, language)
            problems += binding_problems(segment, units, True)
            problems += fact_problems(segment, whole, records, language)
            problems += order_problems(segment, whole, records, language)
    return problems
