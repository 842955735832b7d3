"""Answers to the questions asked inside a job thread: yes/no feasibility, the spot delta, a GPU-count comparison.

Each starts with its answer (yes or no; spot saves or not; which count is better) and repeats nothing else. Every
number comes from the estimator or the ranking results carried in the state.
"""

from __future__ import annotations

from typing import Any

from agent.writing.format import hours, interval, money, number, templates
from agent.writing.job import offer_cost, region_of
from agent.writing.notes import price_notes


def card_name(feasibility: dict[str, Any], language: str) -> str:
    """The hardware the question is about: 'one RTX4090', '2× RTX4090', 'one 24 GB card'."""
    t = templates(language)
    count = feasibility["num_gpus"]
    if feasibility.get("gpu"):
        return t["card_named" if count == 1 else "cards_named"].format(gpu=feasibility["gpu"], count=count)
    return t["card_size" if count == 1 else "cards_size"].format(size=_card_gb(feasibility, language), count=count)


def _card_gb(feasibility: dict[str, Any], language: str) -> str:
    """The user's card size as written in an answer: '48', '40,5'."""
    return number(feasibility["card_gb"], language, 0 if float(feasibility["card_gb"]).is_integer() else 1)


def same_hardware_fixes(fixes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The estimator's fixes that keep the user's hardware (more GPUs is no fix for 'my two 4090s')."""
    return [f for f in fixes if "num_gpus" not in (f.get("changes") or {}) and f.get("code") != "more_gpus"]


def _options(fixes: list[dict[str, Any]], language: str) -> list[str]:
    """The fixes that fit, as 'QLoRA (≈ 14.0 GiB)'."""
    t = templates(language)
    return [
        t["option"].format(
            fix=t["fix_names"].get(f["code"], f["code"]).format(count=""), gib=number(f["per_gpu_gib"], language, 1)
        )
        for f in fixes
        if f.get("fits")
    ]


def _rent_line(key: str, offer: dict[str, Any], spec: dict[str, Any], language: str) -> str:
    """A rental in one sentence."""
    t = templates(language)
    return t[key].format(
        gpus=offer["total_gpus"],
        gpu=offer["gpu"],
        provider=offer["provider"],
        vram=number(offer.get("vram_gib_per_gpu") or 0, language, 0),
        where=", ".join(filter(None, [region_of(offer), t["pricing_spot" if offer["spot"] else "pricing_on_demand"]])),
        hours=hours(offer["est_hours"], language),
        cost=offer_cost(offer, spec, language),
    )


def yes_no(state: dict[str, Any]) -> str:
    """'Yes/No — it needs about N GiB per GPU, and <card> has M GiB', what fits on that card, and what to rent."""
    language, spec = state["language"], state["spec"]
    t = templates(language)
    feasibility = state["feasibility"]
    card = card_name(feasibility, language)
    margin = feasibility["needed_gib"] <= feasibility["vram_gib"]  # a "no" under the card: over its margin
    key = "yes_fits" if feasibility["fits"] else "no_fits_margin" if margin else "no_fits"
    key += "_many" if feasibility["num_gpus"] > 1 else ""
    setting = state.get("fit_setting")  # a what-if's other settings: "**Yes** (with QLoRA) — it needs ..."
    lines = [
        t[key].format(
            yes=f"{t['yes']} ({setting})" if setting else t["yes"],
            no=f"{t['no']} ({setting})" if setting else t["no"],
            needed=number(feasibility["needed_gib"], language, 1),
            card=card,
            vram=number(feasibility["vram_gib"], language, 1),
            usable=number(feasibility.get("usable_gib") or 0.0, language, 1),
        )
    ]
    if feasibility.get("lowered_micro"):  # a yes at a smaller micro-batch than stated: say so, with the stated need
        lines[0] += " " + t["fit_lowered_micro"].format(
            micro=feasibility["lowered_micro"],
            stated=feasibility["micro_batch_size"],
            needed=number(feasibility["stated_needed_gib"], language, 1),
        )
    if feasibility.get("plan_gib"):  # the plan below uses more: spare memory spent on speed
        lines[0] += " " + t["fit_plan_spends"].format(plan=number(feasibility["plan_gib"], language, 1))
    too_small = list(feasibility.get("too_small") or [])  # "an A100": the 40 GB one would not do
    if feasibility.get("too_small_card"):  # "a 24 GB card or an H100?": the card would not do
        too_small.append(t["card_size_label"].format(size=_card_gb(feasibility, language)))
    if feasibility["fits"] and too_small:
        lines[0] += " " + t["smaller_too_small"].format(names=", ".join(too_small))
    fixes = same_hardware_fixes(feasibility.get("fixes") or [])
    if not feasibility["fits"]:
        options = _options(fixes, language)
        if options:
            lines.append(t["can_do"].format(card=card, options=t["or"].join(options[:3])))
        elif fixes:
            closest = min(fixes, key=lambda f: f["per_gpu_gib"])
            lines.append(
                t["can_do_nothing"].format(
                    card=card,
                    fix=t["fix_names"].get(closest["code"], closest["code"]).format(count=""),
                    gib=number(closest["per_gpu_gib"], language, 1),
                )
            )
    offer, key = rental_for(feasibility, (state.get("ranking") or {}).get("offers") or [])
    if offer:
        lines.append(" ".join([_rent_line(key, offer, spec, language), *price_notes(offer, language)]))
    return "\n\n".join(lines)


def rental_for(feasibility: dict[str, Any], offers: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, str]:
    """The offer a yes/no answer points to: that card when it fits and is offered, else the best way to run it."""
    if not offers:
        return None, ""
    if feasibility["fits"]:
        cards = [o for o in offers if _is_that_card(o, feasibility) and o["total_gpus"] == feasibility["num_gpus"]]
        same = next((o for o in cards if not o.get("price_outlier")), cards[0] if cards else None)  # trusted first
        return (same, "rent_yes") if same else (offers[0], "rent_other")
    return offers[0], "rent_instead"


def _is_that_card(offer: dict[str, Any], feasibility: dict[str, Any]) -> bool:
    """Whether the offer rents the card the question is about (same GPU, or the same memory size)."""
    vram = offer.get("vram_gib_per_gpu") or 0
    same_size = abs(vram - feasibility["vram_gib"]) <= 0.1 * feasibility["vram_gib"]
    return same_size and (not feasibility.get("gpu") or offer["gpu"] == feasibility["gpu"])


def spot_delta(state: dict[str, Any]) -> str:
    """Spot versus on-demand for this job: prices, expected cost with interruptions, checkpoint interval, saving."""
    language, spec = state["language"], state["spec"]
    t = templates(language)
    offers = (state.get("ranking") or {}).get("offers") or []
    if not offers:
        return t["no_offer"].format(excluded="-")
    top = offers[0]
    spot_reason = next((r for r in top.get("reasons", []) if str(r.get("code", "")).startswith("spot_")), None)
    params = (spot_reason or {}).get("params") or {}
    if top["spot"]:
        on_demand = top.get("on_demand_price_per_hour")
        text = t["spot_delta_yes" if on_demand else "spot_delta_yes_spot_only"].format(
            savings=money(params.get("savings_usd") or top.get("spot_savings_usd") or 0.0, "USD", language),
            gpus=top["total_gpus"],
            gpu=top["gpu"],
            provider=top["provider"],
            spot_price=money(top["price_per_hour"], "USD", language),
            od_price=money(on_demand, "USD", language) if on_demand else "?",
            preemptions=number(params.get("expected_preemptions") or 0.0, language, 1),
            hours=hours(top["est_hours"], language),
            cost=offer_cost(top, spec, language),
        )
        lines = [text]
        if params.get("checkpoint_interval_hours"):
            lines.append(
                t["spot_delta_checkpoint"].format(interval=interval(params["checkpoint_interval_hours"], language))
            )
        return "\n\n".join(lines)
    best_spot = next((o for o in offers if o["spot"]), None)
    if best_spot is not None:
        spot_params = next(
            (r.get("params") or {} for r in best_spot.get("reasons", []) if str(r.get("code", "")).startswith("spot_")),
            {},
        )
        saving = top["est_cost"] - best_spot["est_cost"]
        text = t["spot_delta_other"].format(
            gpus=best_spot["total_gpus"],
            gpu=best_spot["gpu"],
            provider=best_spot["provider"],
            spot_price=money(best_spot["price_per_hour"], "USD", language),
            spot_cost=money(best_spot["est_cost"], "USD", language),
            preemptions=number(spot_params.get("expected_preemptions") or 0.0, language, 1),
            hours=hours(best_spot["est_hours"], language),
            gpus0=top["total_gpus"],
            gpu0=top["gpu"],
            provider0=top["provider"],
            hours0=hours(top["est_hours"], language),
            cost=offer_cost(top, spec, language),
        )
        if saving > 0:
            codes = {str(r.get("code")) for r in best_spot.get("reasons", [])}
            text += " " + t["spot_cheaper_outlier" if "price_outlier" in codes else "spot_cheaper_ranked_lower"].format(
                saving=money(saving, "USD", language)
            )
        return text
    code = str((spot_reason or {}).get("code", ""))
    reason = (
        t["spot_reason_deadline"]
        if ("deadline_risk" in code or "never_finishes" in code)
        else t["spot_reason_not_cheaper"]
        if spot_reason
        else t["spot_reason_none"]
    )
    text = t["spot_delta_no"].format(
        reason=reason,
        gpus=top["total_gpus"],
        gpu=top["gpu"],
        provider=top["provider"],
        hours=hours(top["est_hours"], language),
        cost=offer_cost(top, spec, language),
    )
    if top.get("spot_price_per_hour"):
        text += t["spot_delta_no_price"].format(spot_price=money(top["spot_price_per_hour"], "USD", language))
    return text


def compare(state: dict[str, Any]) -> str:
    """The asked GPU count against the current recommendation: both rentals and the trade-off."""
    language = state["language"]
    t = templates(language)
    comparison = state.get("comparison") or {}
    count = comparison.get("num_gpus")
    offers = (state.get("ranking") or {}).get("offers") or []
    other = comparison.get("offer")
    if not offers:
        return t["no_offer"].format(excluded="-")
    now = offers[0]
    if other is None:
        return t["compare_none"].format(count=count, count0=now["total_gpus"], gpu0=now["gpu"])
    if now["total_gpus"] == count:
        return t["compare_same"].format(
            count=count,
            gpus=now["total_gpus"],
            gpu=now["gpu"],
            provider=now["provider"],
            hours=hours(now["est_hours"], language),
            cost=money(now["est_cost"], "USD", language),
        )
    lines = [
        t["compare_line"].format(
            count=other["total_gpus"],
            gpu=other["gpu"],
            provider=other["provider"],
            hours=hours(other["est_hours"], language),
            cost=money(other["est_cost"], "USD", language),
            count0=now["total_gpus"],
            gpu0=now["gpu"],
            provider0=now["provider"],
            hours0=hours(now["est_hours"], language),
            cost0=money(now["est_cost"], "USD", language),
        )
    ]
    cheaper = other["est_cost"] < now["est_cost"]
    faster = other["est_hours"] < now["est_hours"]
    cost_gap = money(abs(other["est_cost"] - now["est_cost"]), "USD", language)
    hour_gap = hours(abs(other["est_hours"] - now["est_hours"]), language)
    if cheaper and faster:
        key = "compare_cheaper_faster"
    elif cheaper:
        key = "compare_cheaper_slower"
    elif faster:
        key = "compare_faster_pricier"
    else:
        key = "compare_worse"
    lines.append(t[key].format(count=other["total_gpus"], count0=now["total_gpus"], money=cost_gap, hours=hour_gap))
    return "\n\n".join(lines)
