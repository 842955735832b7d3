"""Short sentences from what the tools flag about an answer: why the first offer is not the cheapest, a price to
check, a market price, a model the registry did not know, the limit that leaves no offer, time billed outside
training. Each reads its fields with .get(), so answers stay right with tools that do not report them yet."""

from __future__ import annotations

from typing import Any

from agent.writing.format import hours, money, number, templates, token_count


def headline_reason(ranking: dict[str, Any], language: str) -> str | None:
    """Why the recommended offer is not the cheapest one (tools.ranking.headline)."""
    reason = ranking.get("headline_reason") or {}
    params = reason.get("params") or {}
    t = templates(language)
    cheapest = money(params.get("cheapest_usd") or 0, "USD", language)
    nodes = number(params.get("cheapest_nodes") or 2, language, 0)
    if reason.get("code") == "cheaper_price_unverified":
        return t["why_headline_unverified"].format(
            cheapest_provider=params.get("cheapest_provider", "?"), cheapest=cheapest
        )
    if reason.get("code") == "deadline_margin":
        return t["why_headline_margin"].format(
            cheapest=cheapest,
            cheapest_hours=hours(params.get("cheapest_hours") or 0, language),
            deadline=number(params.get("deadline_hours") or 0, language, 0),
        )
    if reason.get("code") == "spot_nodes_under_deadline":
        return t["why_headline_spot_nodes"].format(
            cheapest=cheapest, cheapest_nodes=nodes, deadline=number(params.get("deadline_hours") or 0, language, 0)
        )
    if reason.get("code") == "cheaper_layout_not_advised":
        key = "why_headline_layout_assumed" if params.get("cheapest_fabric_assumed") else "why_headline_layout"
        return t[key].format(cheapest=cheapest, cheapest_nodes=nodes)
    if reason.get("code") == "only_plans_not_advised":
        return t["why_headline_only_assumed" if params.get("fabric_assumed") else "why_headline_only_slow"]
    if reason.get("code") != "simpler_near_tie":
        return None
    changes = simpler_changes(params, language)
    if not changes:
        return None
    return t["why_headline_simpler"].format(
        extra=money(params.get("extra_usd") or 0, "USD", language),
        cheapest_gpus=params.get("cheapest_gpus", "?"),
        cheapest_provider=params.get("cheapest_provider", "?"),
        changes=changes,
    )


def simpler_changes(params: dict[str, Any], language: str) -> str:
    """How a simpler near tie is simpler than the plan it leads over ('2 GPUs instead of 8, no interruptions'), from
    a headline reason's params; '' when it is not."""
    t = templates(language)
    changes = []
    if (params.get("headline_nodes") or 1) < (params.get("cheapest_nodes") or 1):
        changes.append(t["simpler_one_node" if params.get("headline_nodes") == 1 else "simpler_fewer_nodes"])
    if (params.get("headline_gpus") or 0) < (params.get("cheapest_gpus") or 0):
        changes.append(
            t["simpler_fewer_gpus"].format(gpus=params["headline_gpus"], cheapest_gpus=params["cheapest_gpus"])
        )
    if params.get("cheapest_spot") and not params.get("headline_spot"):
        changes.append(t["simpler_no_spot"])
    return str(t["simpler_join"].join(changes))


def long_spot_risk(offer: dict[str, Any], language: str) -> str | None:
    """Interruptions, restarts and capacity of a spot run over a day or on several nodes (tools.ranking.entries)."""
    reason = next((r for r in offer.get("reasons") or [] if r.get("code") == "long_spot_risk"), None)
    if not offer.get("spot") or reason is None:
        return None
    t, p = templates(language), reason.get("params") or {}
    nodes = int(p.get("nodes") or 1)
    many = "many" if nodes > 1 else "one"
    every = t["long_spot_every"].format(mtbf=number(p["mtbf_hours"], language, 1)) if p.get("mtbf_hours") else ""
    count, lost, run_hours = (float(p.get(key) or 0) for key in ("expected_preemptions", "lost_hours", "hours"))
    span = (
        t["long_spot_span_days"].format(days=number(p.get("days") or 0, language, 1))
        if run_hours >= 48
        else t["long_spot_span_hours"].format(hours=number(run_hours, language, 1))
    )
    return t["long_spot_risk"].format(
        span=span,
        nodes_text=t[f"long_spot_nodes_{many}"].format(nodes=nodes),
        preemptions=number(count, language, 1 if count < 10 else 0),
        every=every,
        scope=t[f"long_spot_scope_{many}"].format(nodes=nodes),
        restart=number(p.get("restart_minutes") or 0, language, 0),
        lost=number(lost, language, 1 if lost < 10 else 0),
    )


def limit_misses(offer: dict[str, Any], spec: dict[str, Any], language: str, wording: dict[str, str]) -> list[str]:
    """The user's limits the offer misses, in `wording` ('misses_deadline' with {deadline}, 'over_budget' with
    {budget}): the act answers and the recommendation's alternatives word them their own way."""
    missed = []
    if spec.get("deadline_hours") and offer.get("meets_deadline") is False:
        missed.append(wording["misses_deadline"].format(deadline=number(spec["deadline_hours"], language, 0)))
    budget = spec.get("budget")
    if budget and offer.get("meets_budget") is False:
        missed.append(wording["over_budget"].format(budget=money(budget["amount"], budget["currency"], language)))
    return missed


def refused_values(refused: list[dict[str, str]], language: str) -> list[str]:
    """'I left out the deadline -5 hours: a negative value cannot be one.' for each value the parser could not use."""
    t = templates(language)
    return [
        t["refused_value"].format(
            field=t["field_labels"].get(r["field"], r["field"]),
            value=r["value"],
            reason=t["refused_reasons"].get(r["reason"], r["reason"]),
        )
        for r in refused
    ]


BYTE_UNITS = ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "KB"))
"""The unit a size in bytes is said in: the largest it is at least one of."""


def text_size_note(size_bytes: float, tokens: int, language: str) -> str:
    """'I read 2 GB of text as about 500M tokens (4 bytes of text per token).' for a data set sized in bytes."""
    from tools.jobtime import TEXT_BYTES_PER_TOKEN

    scale, unit = next(((s, u) for s, u in BYTE_UNITS if size_bytes >= s), (1.0, "B"))
    size = f"{number(size_bytes / scale, language, 0 if (size_bytes / scale).is_integer() else 1)} {unit}"
    return templates(language)["text_size_read"].format(
        size=size, tokens=token_count(tokens, language), per=number(TEXT_BYTES_PER_TOKEN, language, 0)
    )


def price_notes(offer: dict[str, Any], language: str) -> list[str]:
    """A price to check (outlier against other providers) or a market price that can be outbid."""
    t = templates(language)
    notes = []
    if offer.get("price_outlier"):
        notes.append(t["price_outlier_note"])
    if offer.get("on_demand_is_market") and not offer.get("spot"):
        notes.append(t["market_price_note"].format(provider=offer["provider"]))
    return notes


def unknown_model(state: dict[str, Any], language: str) -> str | None:
    """'I don't know X; I used a generic N B decoder' when the estimator approximated an unknown name."""
    spec = state.get("spec") or {}
    if state.get("unknown_model") and spec.get("params_b"):
        return templates(language)["unknown_model"].format(
            name=state["unknown_model"], params=number(spec["params_b"], language, 1)
        )
    for key in ("estimate", "single_gpu_estimate"):
        estimate = state.get(key) or {}
        name = estimate.get("unknown_model")
        if name:
            size = (state.get("spec") or {}).get("params_b") or (estimate.get("total_params") or 0) / 1e9
            return templates(language)["unknown_model"].format(name=name, params=number(size, language, 1))
    return None


def binding_limit(ranking: dict[str, Any], language: str) -> str | None:
    """The limit that leaves no offer (memory, budget, deadline or availability), with the tool's numbers; a budget
    or deadline limit says what would help instead of offering memory fixes."""
    code, params = ranking.get("binding_limit"), ranking.get("binding_params") or {}
    t = templates(language)
    nodes = params.get("nodes" if code == "budget" else "fastest_nodes") or 1
    on_nodes = t["binding_nodes"].format(nodes=number(nodes, language, 0)) if nodes > 1 else ""
    if code == "memory" and params.get("offers_too_small"):
        return t["binding_memory"].format(count=number(params["offers_too_small"], language, 0))
    if code == "budget" and params.get("min_cost_usd") is not None:
        budget = params.get("budget_usd")
        over = t["binding_budget_over"].format(budget=money(budget, "USD", language)) if budget is not None else ""
        late = t["binding_budget_late"] if params.get("deadline_met") is False else ""
        return t["binding_budget"].format(
            cost=money(params["min_cost_usd"], "USD", language),
            gpus=number(params.get("gpus") or 0, language, 0),
            nodes=on_nodes,
            hours=hours(params.get("hours") or 0, language),
            over=over,
            late=late,
        )
    if code == "compute" and params.get("fastest_hours") is not None:
        deadline = params.get("deadline_hours") or 0
        return t["binding_compute"].format(
            deadline=number(deadline, language, 0 if float(deadline).is_integer() else 1),
            hours=hours(params["fastest_hours"], language),
            gpus=number(params.get("fastest_gpus") or 0, language, 0),
            nodes=on_nodes,
            gpu_hours=number(params.get("gpu_hours") or 0, language, 0),
        )
    if code == "availability":
        return t["binding_availability"]
    return None


def overheads(offer: dict[str, Any] | None, language: str) -> str | None:
    """Time billed outside training (instance start, downloads, data staging, checkpoint writes), in minutes."""
    items = (offer or {}).get("overhead_hours") or {}
    if not any(isinstance(v, (int, float)) and v > 0 for v in items.values()):
        return None
    t = templates(language)
    parts = [
        t["overhead_items"][key].format(minutes=number(60 * items[key], language, 0))
        for key in ("instance_start", "downloads", "dataset_staging", "checkpoint_writes")
        if isinstance(items.get(key), (int, float)) and 60 * items[key] >= 0.5
    ]
    return t["assumption_overheads"].format(items=", ".join(parts)) if parts else None
