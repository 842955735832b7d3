"""Formatting for answers in the user's language (numbers, money, durations) and the shared sentences.

Every number in the text is formatted here from a tool's output; nothing is computed or invented. The optional LLM
phrasing (agent/llm/phrasing.py) starts from the text written here and may only rephrase it.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import prompts


@cache
def templates(language: str) -> dict[str, Any]:
    """The answer templates of one language (prompts/<lang>/recommend.json)."""
    return json.loads(prompts.load_in(language, "recommend.json"))


def number(value: float, language: str, decimals: int = 1) -> str:
    """A number in the language's convention: 1,234.5 (en) or 1.234,5 (it, id)."""
    text = f"{value:,.{decimals}f}"
    if language in ("it", "id"):
        text = text.replace(",", "\x00").replace(".", ",").replace("\x00", ".")
    return text


def money(amount: float, currency: str, language: str) -> str:
    """An amount of money with its currency, two decimals (none for IDR)."""
    decimals = 0 if currency == "IDR" or amount >= 1000 else 2
    value = number(amount, language, decimals)
    if currency == "USD":
        return f"${value}" if language == "en" else f"{value} $"
    if currency == "EUR":
        return f"€{value}" if language == "en" else f"{value} €"
    return f"Rp {value}" if currency == "IDR" else f"{value} {currency}"


def hours(value: float, language: str) -> str:
    """A duration in hours with sensible precision."""
    return number(value, language, 1 if value < 100 else 0)


def interval(value_hours: float, language: str) -> str:
    """A checkpoint interval: minutes below two hours, else hours."""
    if value_hours < 2:
        return f"{number(value_hours * 60, language, 0)} min"
    return f"{number(value_hours, language, 1)} {templates(language)['hours_unit']}"


def percent(share: float | None, language: str) -> str:
    """A share as a percentage ('12 %'; '< 1 %' for tiny shares)."""
    if share is None:
        return "?"
    return "< 1 %" if 0 < share < 0.01 else f"{number(100 * share, language, 0)} %"


def spot_sentence(
    offer: dict[str, Any], spec: dict[str, Any], language: str, on_demand: dict[str, Any] | None = None
) -> str | None:
    """Why spot or on-demand, from the spot-risk result carried in the offer's reasons; a spot offer's saving is
    against `on_demand` (the best on-demand plan within the limits) when given, else against itself on-demand."""
    t = templates(language)
    spot_reason = next((r for r in offer.get("reasons", []) if r["code"].startswith("spot_")), None)
    if offer["spot"] and spot_reason is not None:
        params = spot_reason["params"]
        interval_h = params.get("checkpoint_interval_hours")
        best = on_demand is not None and on_demand["est_cost"] > offer["est_cost"]
        savings = on_demand["est_cost"] - offer["est_cost"] if best and on_demand else params.get("savings_usd")
        key = ("spot_vs_best" if best else "spot_yes") + ("" if interval_h else "_no_interval")
        return t[key].format(
            savings=money(savings or 0.0, "USD", language),
            preemptions=number(params.get("expected_preemptions") or 0.0, language, 1),
            interval=interval(interval_h, language) if interval_h else "",
        )
    if spec.get("interruptible_ok") is False:
        return t["spot_no_preference"]
    if spot_reason is None:
        return t["spot_no_capacity"] if spec.get("interruptible_ok") else None
    code = spot_reason["code"]
    if "deadline_risk" in code or "never_finishes" in code:
        return t["spot_no_deadline_risk"]
    if "not_cheaper" in code:
        return t["spot_no_not_cheaper"]
    return t["spot_no_other"]


def same_rental(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two ranked offers are the same rental."""
    keys = ("provider", "instance_type", "region", "spot", "nodes")
    return all(a.get(k) == b.get(k) for k in keys)


def token_count(value: float, language: str) -> str:
    """A token count in millions or billions."""
    t = templates(language)
    if value >= 1e9:
        return t["tokens_billions"].format(value=number(value / 1e9, language, 1))
    return t["tokens_millions"].format(value=number(value / 1e6, language, 1))


def ask_back(missing: list[str], language: str) -> str:
    """Ask for the fields the job cannot be sized without."""
    t = templates(language)
    names = [t["missing_names"][name] for name in missing]
    return t["ask_back"].format(missing=t["and"].join(names))


def fixed_text(key: str, language: str) -> str:
    """A fixed message (refusal, out of scope, unsupported language, fallback note)."""
    return templates(language)[key]
