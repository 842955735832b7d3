"""Answers that weigh the plan against another option, from tools, without changing the job: two GPUs or methods
compared, and "why not X?" (X's best plan, and what it loses by: a limit it misses, its cost and time, or the headline
rule the plan leads by)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.graph.acts.gpu_mentions import gpu_counts
from agent.graph.acts.subject import plan_basis
from agent.graph.acts.texts import (
    act_templates,
    change_words,
    excluded_reason,
    gap_words,
    limits,
    rental,
    with_limits,
)
from agent.parsing import methods_named
from agent.writing import headline_reason, hours, money, number, same_rental, simpler_changes, templates
from tools.ranking import lead_over


def top_for(
    state: dict[str, Any], update: dict[str, Any], db_path: Path
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The best offer for the job with `update` applied (the job itself untouched), ranked as the plan is, and that
    ranking."""
    from agent.graph.questions import ranked

    ranking, _ = ranked(plan_basis(state, update), db_path, state.get("preference"))
    offers = ranking.get("offers") or []
    return (offers[0] if offers else None), ranking


def compare(state: dict[str, Any], db_path: Path) -> list[str]:
    """Two GPUs (or two methods) for this job, each with time, cost and its limits, then which wins."""
    language, spec = state["language"], state["spec"]
    t = act_templates(language)
    gpus = list(state.get("act_gpus") or [])
    counts = gpu_counts(state.get("message") or "") if gpus else {}
    if len(gpus) >= 2:  # each at the count named before it ("two L40S or one H100?"), else at its best count
        options = [_gpu_option(gpu, counts.get(gpu)) for gpu in gpus[:2]]
    elif gpus:  # the one named (at the count named before it) against the plan's GPU
        plan = ((state.get("ranking") or {}).get("offers") or [None])[0]
        options = [_gpu_option(gpus[0], counts.get(gpus[0]))] + ([_gpu_option(plan["gpu"], None)] if plan else [])
    else:
        asked = (state.get("parsed") or {}).get("method")
        names = templates(language)["method_names"]
        named = methods_named(state.get("message") or "")  # "full fine-tuning vs LoRA": the two it names
        methods = [m for m in dict.fromkeys([*named, spec.get("method"), asked]) if m][:2]
        options = [(names.get(m, m), {"method": m}) for m in methods]
    lines, found = [], []
    for name, update in options:
        top, ranking = top_for(state, update, db_path)
        if top is None:
            lines.append(t["compare_item_none"].format(name=name, reason=excluded_reason(ranking, language)))
        else:
            lines.append(
                t["compare_item"].format(
                    name=name, rental=with_limits(top, spec, language, state.get("display_currency"))
                )
            )
            lines.extend(not_first(ranking, language))
            found.append((name, top))
    if len(found) == 2:
        (a, first), (_, second) = found
        words = gap_words(first, second, language)
        lines.append(t["compare_winner"].format(name=a, what=t["and"].join(words)) if words else t["same_result"])
    return lines


def _gpu_option(gpu: str, count: int | None) -> tuple[str, dict[str, Any]]:
    """A GPU to compare, named as the answer says it ("2× L40S", or "L40S" at its best count), and the job change."""
    if count is None:
        return gpu, {"gpu": gpu}
    return f"{count}× {gpu}", {"gpu": gpu, "num_gpus": count}


def why_not(state: dict[str, Any], plan: dict[str, Any], db_path: Path) -> tuple[list[str], dict[str, Any] | None]:
    """X's figures for this job and the reason it lost to the plan; and the job change that would switch to X's plan
    (None where X has no plan or is the plan)."""
    language, spec = state["language"], state["spec"]
    t = act_templates(language)
    gpus = list(state.get("act_gpus") or [])
    parsed = state.get("parsed") or {}
    if gpus:
        name, update = gpus[0], {"gpu": gpus[0]}
    elif parsed.get("providers"):
        name, update = ", ".join(parsed["providers"]), {"providers": parsed["providers"]}
    else:  # a method ("why not QLoRA?") or another field ("why not spot?"), named as a what-if names it
        update = {k: v for k, v in parsed.items() if k != "language"}
        if set(update) == {"method"} and update["method"] == spec.get("method"):  # "why QLoRA and not LoRA?"
            others = [m for m in methods_named(state.get("message") or "") if m != spec.get("method")]
            update = {"method": others[0]} if others else update
        method = update.get("method")
        words = templates(language)["method_names"].get(method, method) if set(update) == {"method"} else None
        name = words or change_words(update, language) or "?"
    other, ranking = top_for(state, update, db_path)
    if other is None:
        return [t["why_not_none"].format(name=name, reason=excluded_reason(ranking, language))], None
    switch = {k: v for k, v in update.items() if v != spec.get(k)}
    # the same rental is the plan when the question only narrows the hardware to the plan's own ("why not the L40S?"
    # on an L40S plan); another method on the same machine is still another plan
    if same_rental(other, plan) and not set(switch) - {"gpu", "providers"}:
        return [t["why_not_is_plan"].format(name=name, rental=rental(plan, spec, language))], None
    if set(switch) == {"method"}:  # the method is the user's job, not the ranking's choice: what it would change
        names = templates(language)["method_names"]
        current = spec.get("method") or "full_finetune"  # the estimator's default
        line = t["why_not_method"].format(
            name=name,
            current=names.get(current, current),
            gaps=t["and"].join(gap_words(other, plan, language)) or t["same_cost_time"],
            rental=rental(other, spec, language),
        )
        return [line, t["question_plain"].format(rental=rental(plan, spec, language))], switch
    missed = limits(other, spec, language)
    rule = None if missed or state.get("preference") else lead_over(plan, other, spec.get("deadline_hours"))
    if rule is not None:  # not worse on cost: the headline rule the plan leads by
        lines = [
            _lead_line(rule, name, language),
            t["compare_item"].format(name=name, rental=rental(other, spec, language)),
            t["question_plain"].format(rental=rental(plan, spec, language)),
        ]
    else:
        reasons = missed + gap_words(other, plan, language)
        lines = [
            t["why_not_lost"].format(
                name=name, reasons=t["and"].join(reasons) or t["same_result"], rental=rental(plan, spec, language)
            ),
            t["compare_item"].format(name=name, rental=rental(other, spec, language)),
        ]
    return lines + not_first(ranking, language), switch or None


def _lead_line(rule: dict[str, Any], name: str, language: str) -> str:
    """Why the plan leads over `name`'s plan, by the headline rule (tools.ranking.lead) with its figures."""
    t, params, code = act_templates(language), rule.get("params") or {}, rule.get("code")
    if code == "cheaper_price_unverified":
        return t["why_not_unverified"].format(
            name=name,
            provider=params.get("cheapest_provider", "?"),
            cost=money(params.get("cheapest_usd") or 0, "USD", language),
        )
    if code == "deadline_margin":
        return t["why_not_margin"].format(
            name=name,
            hours=hours(params.get("cheapest_hours") or 0, language),
            deadline=number(params.get("deadline_hours") or 0, language, 0),
        )
    nodes = number(params.get("cheapest_nodes") or 2, language, 0)
    if code == "cheaper_layout_not_advised":
        key = "why_not_layout_assumed" if params.get("cheapest_fabric_assumed") else "why_not_layout"
        return t[key].format(name=name, nodes=nodes)
    if code == "spot_nodes_under_deadline":
        deadline = number(params.get("deadline_hours") or 0, language, 0)
        return t["why_not_spot_nodes"].format(name=name, nodes=nodes, deadline=deadline)
    return t["why_not_simpler"].format(
        name=name,
        gap=money(abs(params.get("extra_usd") or 0), "USD", language),
        changes=simpler_changes(params, language),
    )


def not_first(ranking: dict[str, Any], language: str) -> list[str]:
    """Why the asked option's best plan is not its cheapest (an unverified cheaper price the user may see listed, a
    plan without deadline margin, ...), as a recommendation says it; nothing when it is."""
    reason = headline_reason(ranking, language)
    return [reason] if reason else []
