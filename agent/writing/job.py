"""The answer to a job: the verdict first (what to rent, cost and time, budget and deadline), then short details.

A first answer gives memory, layout, spot, alternatives, assumptions and sources, each in one short paragraph. A
follow-up repeats the verdict, says what changed and what the offer was before, and only the details the change
touches. Every number comes from the tool results in the state; the wording comes from prompts/<lang>/recommend.json.
"""

from __future__ import annotations

from typing import Any

from agent.writing import notes as writing_notes
from agent.writing.format import (
    hours,
    money,
    number,
    percent,
    same_rental,
    spot_sentence,
    templates,
    token_count,
)

MEMORY_FIELDS = frozenset(
    {
        "model",
        "params_b",
        "method",
        "precision",
        "optimizer",
        "seq_len",
        "micro_batch_size",
        "gradient_checkpointing",
        "gpu",
        "num_gpus",
        "gpu_memory_gb",
    }
)
"""A follow-up changing one of these gets the memory and layout lines again."""
DATA_FIELDS = frozenset({"model", "params_b", "method", "dataset_tokens", "dataset_examples", "epochs", "seq_len"})
CONSISTENT_SHARE = 0.05
"""The memory breakdown is shown only when it adds up to the layout's own per-GPU figure within this share."""
QUIET_COMM_SHARE = 0.01


class Citer:
    """Numbers FAQ citations in the order the answer first uses them; only cited entries are listed."""

    def __init__(self, citations: list[dict[str, Any]]) -> None:
        self._by_topic = {c.get("topic"): c for c in citations}
        self.used: list[dict[str, Any]] = []

    def cite(self, topic: str) -> str:
        """' [n]' for the entry behind `topic`, or '' when none backs it."""
        entry = self._by_topic.get(topic)
        if entry is None:
            return ""
        if entry not in self.used:
            self.used.append(entry)
        return f" [{self.used.index(entry) + 1}]"

    def sources(self, language: str) -> str:
        """The numbered source list of the cited entries."""
        if not self.used:
            return ""
        return "\n".join(
            [templates(language)["sources_title"]] + [f"- [{i}] {c['title']}" for i, c in enumerate(self.used, 1)]
        )


def region_of(offer: dict[str, Any]) -> str | None:
    """The offer's region, or None when the catalog lists none."""
    return offer.get("region") or None  # placeholder regions ('UNSPECIFIED') are read as none by the importer


def offer_cost(offer: dict[str, Any], spec: dict[str, Any], language: str) -> str:
    """The offer's total cost in USD, with the budget currency beside it when the budget is in another one."""
    t = templates(language)
    cost = money(offer["est_cost"], "USD", language)
    currency = (spec.get("budget") or {}).get("currency")
    if offer.get("est_cost_budget_currency") is not None and currency not in (None, "USD"):
        cost += t["cost_in_budget_currency"].format(
            converted=money(offer["est_cost_budget_currency"], currency, language)
        )
    return cost


def verdict_line(offer: dict[str, Any], spec: dict[str, Any], language: str) -> str:
    """What to rent, where, how it is billed, how long and how much in total."""
    t = templates(language)
    pricing = t["pricing_spot" if offer["spot"] else "pricing_on_demand"]
    region = region_of(offer)
    return t["verdict"].format(
        gpus=offer["total_gpus"],
        gpu=offer["gpu"],
        provider=offer["provider"],
        where=f"{region}, {pricing}" if region else pricing,
        instance=offer["instance_type"],
        hours=hours(offer["est_hours"], language),
        cost=offer_cost(offer, spec, language),
    )


def limits_line(offer: dict[str, Any], spec: dict[str, Any], language: str) -> str | None:
    """Whether the offer fits the budget and the deadline the user gave, and the caps on GPUs and machines it keeps,
    in one sentence."""
    t = templates(language)
    parts = []
    budget = spec.get("budget")
    if budget:
        key = "limits_budget_ok" if offer.get("meets_budget") is not False else "limits_budget_over"
        parts.append(t[key].format(budget=money(budget["amount"], budget["currency"], language)))
    if spec.get("deadline_hours"):
        key = "limits_deadline_ok" if offer.get("meets_deadline") is not False else "limits_deadline_miss"
        parts.append(t[key].format(deadline=number(spec["deadline_hours"], language, 0)))
    if spec.get("max_gpus"):
        parts.append(t["limits_gpus_cap"].format(gpus=number(spec["max_gpus"], language, 0)))
    if spec.get("max_nodes"):
        nodes = spec["max_nodes"]
        parts.append(
            t["limits_one_node"] if nodes == 1 else t["limits_nodes_cap"].format(nodes=number(nodes, language, 0))
        )
    if not parts:
        return None
    text = t["limits_join"].join(parts)
    return text[0].upper() + text[1:] + "."


def verdict_block(offer: dict[str, Any], spec: dict[str, Any], language: str) -> str:
    """The verdict in at most three lines: the rental, then budget and deadline."""
    return "\n".join(line for line in (verdict_line(offer, spec, language), limits_line(offer, spec, language)) if line)


def memory_line(state: dict[str, Any], offer: dict[str, Any], language: str) -> str | None:
    """Memory per GPU of the layout the offer uses; the breakdown only when it is that same layout's figure."""
    t = templates(language)
    per_gpu = offer.get("per_gpu_gib")
    estimate = state.get("estimate") or {}
    vram = offer.get("vram_gib_per_gpu")
    if per_gpu is None and not estimate:
        return None
    if estimate and (per_gpu is None or abs(estimate["per_gpu_gib"] - per_gpu) <= CONSISTENT_SHARE * per_gpu):
        b = estimate["breakdown_gib"]

        def g(key):
            return number(b.get(key, 0.0), language, 1)

        return t["memory_short"].format(
            per_gpu=number(estimate["per_gpu_gib"], language, 1),
            vram=number(vram, language, 0) if vram else "?",
            weights=g("weights"),
            gradients=g("gradients"),
            optimizer=g("optimizer"),
            activations=g("activations"),
            temporary=g("temporary"),
            overhead=g("overhead"),
        )
    return t["memory_total"].format(
        per_gpu=number(per_gpu, language, 1), vram=number(vram, language, 0) if vram else "?"
    )


def layout_line(offer: dict[str, Any], language: str) -> str | None:
    """The layout the numbers use, with its communication share (negligible shares said so)."""
    t = templates(language)
    verdict = offer.get("topology_verdict")
    params = offer.get("topology_params") or {}
    layout = t["layout_names"].get(params.get("layout") or "", params.get("layout") or "")
    share = params.get("exposed_comm_share")
    quiet = share is None or share < QUIET_COMM_SHARE
    key = (
        {"multi_gpu_ok": "verdict_multi_gpu_quiet", "multi_node_ok": "verdict_multi_node_quiet"}.get(verdict or "")
        if quiet
        else None
    )
    key = key or f"verdict_{verdict}"
    if key not in t:
        return None
    return t[key].format(
        gpus=offer["total_gpus"], nodes=offer.get("nodes", 1), layout=layout, comm=percent(share, language)
    )


def missed_limits(offer: dict[str, Any], spec: dict[str, Any], language: str) -> str:
    """' (misses the 48 h deadline)' for an alternative that misses one of the user's limits, '' otherwise."""
    t = templates(language)
    missed = writing_notes.limit_misses(offer, spec, language, t["alt_miss_items"])
    return t["alt_misses"].format(misses=t["limits_join"].join(missed)) if missed else ""


def alternatives_shown(ranking: dict[str, Any], top: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The offers a recommendation shows beside its plan, in order, each with its template key: the on-demand plan
    within the limits when the plan is spot, the cheapest and the fastest (each once, none the plan itself)."""
    on_demand = ranking.get("on_demand_alternative") if top.get("spot") else None
    shown: list[dict[str, Any]] = [top]
    found = []
    for key, offer in (
        ("alt_on_demand_short", on_demand),
        ("alt_cheapest_short", ranking.get("cheapest_that_fits")),
        ("alt_fastest_short", ranking.get("fastest")),
    ):
        if offer and not any(same_rental(offer, seen) for seen in shown):
            shown.append(offer)
            found.append((key, offer))
    return found


def alternatives_line(ranking: dict[str, Any], top: dict[str, Any], spec: dict[str, Any], language: str) -> str | None:
    """Beside the recommended offer, in one line: the on-demand plan within the limits when the headline is spot,
    then the cheapest and the fastest offers, each with the limits it misses."""
    t = templates(language)
    on_demand = ranking.get("on_demand_alternative") if top.get("spot") else None
    none_within = (
        t["no_on_demand_within"]
        if top.get("spot") and on_demand is None and (spec.get("budget") or spec.get("deadline_hours"))
        else None
    )
    items = []
    for key, offer in alternatives_shown(ranking, top):
        items.append(
            t[key].format(
                gpus=offer["total_gpus"],
                gpu=offer["gpu"],
                provider=offer["provider"],
                hours=hours(offer["est_hours"], language),
                cost=money(offer["est_cost"], "USD", language),
            )
            + missed_limits(offer, spec, language)
        )
    line = t["alternatives_line"].format(items=t["alternatives_join"].join(items)) if items else None
    return " ".join(p for p in (none_within, line) if p) or None


def assumptions_line(items: list[str], language: str) -> str | None:
    """The assumptions that drive the cost, in one paragraph."""
    t = templates(language)
    return t["assumptions_line"].format(items=t["assumptions_join"].join(items)) if items else None


def single_card_line(state: dict[str, Any], top: dict[str, Any], language: str) -> str | None:
    """What one GPU would need, when that is why the recommendation uses several (no fix: the layout is the fix)."""
    single = state.get("single_gpu_estimate")
    vram = top.get("vram_gib_per_gpu")
    if not single or top["total_gpus"] <= 1 or (vram and single["per_gpu_gib"] <= vram):
        return None
    return templates(language)["single_card_needed"].format(needed=number(single["per_gpu_gib"], language, 1))


def memory_and_layout(state: dict[str, Any], top: dict[str, Any], citer: Citer, language: str) -> str | None:
    """Memory per GPU and the layout those numbers use, in one paragraph (a single GPU needs no layout line)."""
    memory = memory_line(state, top, language)
    parts = [memory + citer.cite("memory") if memory else None]
    if top["total_gpus"] > 1:
        layout = layout_line(top, language)
        parts.append(layout + citer.cite("interconnect") if layout else None)
        parts.append(single_card_line(state, top, language))
    text = " ".join(p for p in parts if p)
    return text or None


def no_offer_answer(state: dict[str, Any], language: str) -> str:
    """No offer can run the job: why (excluded offers) and what one card would need."""
    t = templates(language)
    ranking = state.get("ranking") or {}
    single = state.get("single_gpu_estimate")
    if ranking.get("catalog_unavailable"):  # nothing to rank: say so, with the estimator's figure
        return t["catalog_unavailable"].format(needed=number(single["per_gpu_gib"], language, 1) if single else "?")
    excluded = ", ".join(
        f"{t['excluded_names'].get(reason, reason)} {number(count, language, 0)}"
        for reason, count in sorted((ranking.get("excluded") or {}).items(), key=lambda i: -i[1])
    )
    parts = [
        t["no_offer"].format(excluded=excluded or "-"),
        writing_notes.binding_limit(ranking, language),
        writing_notes.unknown_model(state, language),
    ]
    if single and ranking.get("binding_limit") in (None, "memory"):  # memory is no fix for a budget or a deadline
        parts.append(t["single_card_needed"].format(needed=number(single["per_gpu_gib"], language, 1)))
    return "\n\n".join(p for p in parts if p)


def recommendation(state: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The first answer for a job: verdict, then spot, alternatives, memory, layout, assumptions, sources."""
    language, spec = state["language"], state["spec"]
    ranking = state.get("ranking") or {}
    offers = ranking.get("offers") or []
    citer = Citer(state.get("citations") or [])
    if not offers:
        return no_offer_answer(state, language), []
    top = offers[0]
    spot = spot_sentence(top, spec, language, ranking.get("on_demand_alternative"))
    paragraphs = [
        verdict_block(top, spec, language),
        " ".join(
            filter(None, [writing_notes.unknown_model(state, language), *writing_notes.price_notes(top, language)])
        ),
        " ".join(
            filter(
                None,
                [
                    spot + citer.cite("spot") if spot else None,
                    writing_notes.long_spot_risk(top, language),
                    alternatives_line(ranking, top, spec, language),
                    writing_notes.headline_reason(ranking, language),
                ],
            )
        ),
        memory_and_layout(state, top, citer, language),
        assumptions_line(state.get("assumption_lines") or [], language),
        citer.sources(language),
    ]
    return "\n\n".join(p for p in paragraphs if p), citer.used


def changes_line(changed: list[str], spec: dict[str, Any], preference: str | None, language: str) -> str | None:
    """What the follow-up changed, field by field with the new values."""
    t = templates(language)
    if spec.get("model"):  # a named model replaces a bare size: say the model, not "model size any"
        changed = [name for name in changed if name != "params_b"]
    elif spec.get("params_b"):
        changed = [name for name in changed if name != "model"]
    parts = [
        field_value(name, None, preference, language)
        if name == "prefer"
        else f"{t['field_labels'].get(name, name)} {field_value(name, spec.get(name), preference, language)}"
        for name in changed
    ]
    return t["changed_line"].format(changes=t["changed_join"].join(parts)) if parts else None


def field_value(name: str, value: Any, preference: str | None, language: str) -> str:
    """A changed field's new value as a person reads it."""
    t = templates(language)
    if name == "prefer":
        return t["value_prefer"].get(preference or "none", t["value_none"])  # none: the recommended order again
    if value is None:
        return t["value_none"]
    if isinstance(value, bool):
        return t["value_true" if value else "value_false"]
    if name == "method":
        return t["method_names"].get(value, value)
    if name == "budget":
        return money(value["amount"], value["currency"], language)
    if name in ("dataset_tokens",):
        return token_count(value, language)
    if name == "deadline_hours":
        return f"{number(value, language, 0 if float(value).is_integer() else 1)} {t['hours_unit']}"
    if isinstance(value, float):
        return number(value, language, 0 if value.is_integer() else 1)
    if isinstance(value, int):
        return number(value, language, 0)
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value)


def before_line(last_top: dict[str, Any] | None, top: dict[str, Any], language: str) -> str | None:
    """The previous recommendation, when this one differs ('Same offer as before' otherwise)."""
    if not last_top:
        return None
    t = templates(language)
    if same_rental(last_top, top):
        return t["same_offer"]
    return t["before_line"].format(
        gpus=last_top["total_gpus"],
        gpu=last_top["gpu"],
        provider=last_top["provider"],
        hours=hours(last_top["est_hours"], language),
        cost=money(last_top["est_cost"], "USD", language),
    )


def follow_up(state: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """A follow-up's answer: the verdict, what changed, what it was before, and the details the change touches."""
    language, spec = state["language"], state["spec"]
    ranking = state.get("ranking") or {}
    offers = ranking.get("offers") or []
    changed = list(state.get("changed") or [])
    citer = Citer(state.get("citations") or [])
    change = changes_line(changed, spec, state.get("preference"), language)
    if not offers:
        return "\n\n".join(p for p in (no_offer_answer(state, language), change) if p), []
    top, last_top = offers[0], state.get("last_top")
    new_lead = not (last_top and same_rental(last_top, top))  # a price to check, said of the plan now first
    paragraphs = [
        verdict_block(top, spec, language),
        " ".join(writing_notes.price_notes(top, language)) if new_lead else None,
        "\n".join(p for p in (change, before_line(last_top, top, language)) if p),
    ]
    if "interruptible_ok" in changed:
        spot = spot_sentence(top, spec, language, ranking.get("on_demand_alternative"))
        paragraphs.append(spot + citer.cite("spot") if spot else None)
    if set(changed) & MEMORY_FIELDS:
        paragraphs.append(memory_and_layout(state, top, citer, language))
    if set(changed) & DATA_FIELDS:
        paragraphs.append(assumptions_line(state.get("assumption_lines") or [], language))
    paragraphs.append(citer.sources(language))
    return "\n\n".join(p for p in paragraphs if p), citer.used
