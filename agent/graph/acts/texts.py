"""Shared wording for act answers: templates (prompts/<lang>/acts.json) and a rental in one phrase."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import prompts
from agent.writing import field_value, hours, limit_misses, money, number, templates
from contract.languages import supported_or_default


@cache
def act_templates(language: str) -> dict[str, Any]:
    """The act templates of one language."""
    return json.loads(prompts.load_in(supported_or_default(language), "acts.json"))


def display_cost(usd: float, spec: dict[str, Any], language: str, currency: str | None = None) -> str:
    """A USD total, with the user's currency (the budget's, or the last one they asked for) beside it."""
    from tools.fx import to_usd

    text = money(usd, "USD", language)
    code = currency or (spec.get("budget") or {}).get("currency")
    if code and code != "USD":
        try:
            one, _ = to_usd(1.0, code)
        except ValueError:
            return text
        text += templates(language)["cost_in_budget_currency"].format(converted=money(usd / one, code, language))
    return text


def rental(offer: dict[str, Any], spec: dict[str, Any], language: str, currency: str | None = None) -> str:
    """'8× H100 on lambda, 12.5 h, $480.00 (€441.60)'."""
    return act_templates(language)["rental"].format(
        gpus=offer["total_gpus"],
        gpu=offer["gpu"],
        provider=offer["provider"],
        hours=hours(offer["est_hours"], language),
        cost=display_cost(offer["est_cost"], spec, language, currency),
    )


def limits(offer: dict[str, Any], spec: dict[str, Any], language: str) -> list[str]:
    """Which of the user's limits the offer misses ('misses your 48 h deadline', 'over your budget of $300')."""
    return limit_misses(offer, spec, language, act_templates(language))


def with_limits(offer: dict[str, Any], spec: dict[str, Any], language: str, currency: str | None = None) -> str:
    """A rental followed by the limits it misses, if any."""
    missed = limits(offer, spec, language)
    text = rental(offer, spec, language, currency)
    return f"{text} ({', '.join(missed)})" if missed else text


def gap_words(other: dict[str, Any], plan: dict[str, Any], language: str) -> list[str]:
    """How an offer differs from the plan: 'dearer by $12.00', 'faster by 3.0 h'."""
    t = act_templates(language)
    words = []
    cost_gap, hour_gap = other["est_cost"] - plan["est_cost"], other["est_hours"] - plan["est_hours"]
    if abs(cost_gap) >= 0.01:
        words.append(
            t["dearer_by" if cost_gap > 0 else "cheaper_by"].format(money=money(abs(cost_gap), "USD", language))
        )
    if abs(hour_gap) >= 0.05:
        words.append(t["slower_by" if hour_gap > 0 else "faster_by"].format(hours=hours(abs(hour_gap), language)))
    return words


def change_words(changed: dict[str, Any], language: str) -> str:
    """'sequence length 4,096, spot yes' for the fields a what-if (or a why-not) sets."""
    labels = templates(language)["field_labels"]
    shown = {
        name: value
        for name, value in changed.items()
        if not (name == "model" and value is None and "params_b" in changed)
    }  # "a 70B model": the size says it, not "model any, model size 70"
    return ", ".join(
        f"{labels.get(name, name)} {field_value(name, value, None, language)}" for name, value in shown.items()
    )


BINDING_EXCLUSION = {"budget": "over_budget", "compute": "misses_deadline", "memory": "too_little_vram"}
"""The exclusion named for a ranking's binding limit (an unavailable GPU is said by its exclusion counts)."""


def excluded_reason(ranking: dict[str, Any], language: str) -> str:
    """Why a ranking has no offer: its binding limit or the exclusion counts."""
    rt = templates(language)
    limit = BINDING_EXCLUSION.get(ranking.get("binding_limit") or "")
    if limit:
        return str(rt["excluded_names"][limit])
    excluded = ranking.get("excluded") or {}
    items = [
        f"{rt['excluded_names'].get(k, k)} {number(v, language, 0)}"
        for k, v in sorted(excluded.items(), key=lambda item: -item[1])[:3]
    ]
    return ", ".join(items) or str(rt["excluded_filtered"])  # none excluded: the wishes left no candidate


FOCUS_OFFERED = ("epochs", "dataset_examples", "seq_len", "micro_batch_size", "num_gpus", "budget")
"""The fields a number said alone is asked about, in the order they are offered."""


def focus_question(state: dict[str, Any]) -> str:
    """The question a focus turn asks back: the value of the field it named ("the number of examples is wrong"), or
    the field of the number it said alone ("16")."""
    language, spec = state["language"], state.get("spec") or {}
    t, labels = act_templates(language), templates(language)["field_labels"]
    focus = state.get("focus") or {}
    if focus.get("field"):
        field = focus["field"]
        key = ("focus_what_if" if focus.get("mode") == "what_if" else "focus_change") + (
            "" if spec.get(field) is not None else "_unset"
        )
        return str(t[key]).format(field=labels[field], value=field_value(field, spec.get(field), None, language))
    named = [labels[name] for name in FOCUS_OFFERED]
    return str(t["focus_number"]).format(number=focus.get("value"), fields=", ".join(named), example=named[0])
