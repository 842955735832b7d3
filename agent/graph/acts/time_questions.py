"""Answers to the time and money questions about the plan: within the budget or deadline, how long, how much."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.graph.acts.texts import act_templates, display_cost, rental, with_limits
from agent.writing import hours, money, number, templates
from contract.jobspec import JobSpec


def within(state: dict[str, Any], plan: dict[str, Any]) -> list[str]:
    """Yes or no: does the plan finish within the hours the question names (the job's deadline untouched)."""
    language, spec = state["language"], state["spec"]
    t, rt = act_templates(language), templates(language)
    asked = float((state.get("parsed") or {}).get("deadline_hours") or 0)
    ok = plan["est_hours"] <= asked
    head = t["within_yes" if ok else "within_no"].format(
        yes=rt["yes"], no=rt["no"], hours=hours(asked, language), rental=rental(plan, spec, language)
    )
    return [head] + ([] if ok else duration(state, plan))


def duration(state: dict[str, Any], plan: dict[str, Any], db_path: Path | None = None) -> list[str]:
    """How long the plan takes, split into training and the time around it, and the data it trains on; on another
    GPU count when the question names one."""
    from agent.writing import token_count

    language, spec = state["language"], state["spec"]
    t = act_templates(language)
    asked = (state.get("parsed") or {}).get("num_gpus")
    if asked and db_path is not None and asked != plan["total_gpus"]:
        from agent.graph.questions import comparison

        other = comparison(JobSpec.model_validate(spec), int(asked), db_path, state.get("preference")).get("offer")
        if other is not None:
            return [
                t["count_fewer"].format(fewer=asked, rental=with_limits(other, spec, language)),
                t["now_line"].format(rental=with_limits(plan, spec, language)),
            ]
    lines = [
        t["duration_line"].format(
            hours=hours(plan["est_hours"], language),
            gpus=plan["total_gpus"],
            gpu=plan["gpu"],
            train=hours(plan.get("train_hours") or 0.0, language),
            overhead=hours(_overhead(plan), language),
        )
    ]
    tokens = _trained_tokens(state)
    if tokens:
        lines.append(
            t["data_line"].format(
                tokens=token_count(tokens, language), epochs=number(spec.get("epochs") or 1, language, 0)
            )
        )
    return lines


def _overhead(plan: dict[str, Any]) -> float:
    """Hours outside training (the ranking gives them in total or by item)."""
    value = plan.get("overhead_hours") or 0.0
    return float(sum(value.values()) if isinstance(value, dict) else value)


def _trained_tokens(state: dict[str, Any]) -> float | None:
    """Tokens of one epoch, as the ranking's assumptions (or the job) state them."""
    spec = state["spec"]
    if spec.get("dataset_tokens"):
        return float(spec["dataset_tokens"])
    for item in (state.get("ranking") or {}).get("assumptions") or []:
        if isinstance(item, dict) and item.get("dataset_tokens"):
            return float(item["dataset_tokens"])
    return None


def cost(state: dict[str, Any], plan: dict[str, Any]) -> list[str]:
    """What the plan costs: the hourly price and the billed hours."""
    language, spec = state["language"], state["spec"]
    t = act_templates(language)
    return [
        t["cost_line"].format(
            cost=display_cost(plan["est_cost"], spec, language, state.get("display_currency")),
            price=money(plan["price_per_hour"] * (plan.get("nodes") or 1), "USD", language),
            billed=hours(plan.get("billed_hours") or plan["est_hours"], language),
        )
    ]
