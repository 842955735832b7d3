"""Write the answer in the user's language from tool results only: per-language templates in prompts/.

Every number in the text is formatted here from a tool's output; nothing is computed or invented. The optional LLM
phrasing (agent/phrasing.py) starts from the text written here and may only rephrase it.
"""

from __future__ import annotations

import json
import math
from functools import cache
from typing import Any

import prompts

GIB_ROUND = 1


@cache
def templates(language: str) -> dict[str, Any]:
    """The answer templates of one language (prompts/recommend.<lang>.json)."""
    return json.loads(prompts.load(f"recommend.{language}.json"))


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


def _offer_line(key: str, offer: dict[str, Any], language: str) -> str:
    """An alternative offer in one line."""
    return templates(language)[key].format(
        gpus=offer["total_gpus"], gpu=offer["gpu"], provider=offer["provider"],
        hours=hours(offer["est_hours"], language), cost=money(offer["est_cost"], "USD", language))


def _headline(offer: dict[str, Any], ranking: dict[str, Any], spec: dict[str, Any], language: str) -> str:
    """The recommended offer, its price, time and total cost."""
    t = templates(language)
    cost = money(offer["est_cost"], "USD", language)
    budget = spec.get("budget") or {}
    if offer.get("est_cost_budget_currency") is not None and budget.get("currency") not in (None, "USD"):
        cost += t["cost_in_budget_currency"].format(
            converted=money(offer["est_cost_budget_currency"], budget["currency"], language))
    region = offer.get("region") if offer.get("region") not in (None, "", "UNSPECIFIED") else offer["provider"]
    return t["headline"].format(
        gpus=offer["total_gpus"], gpu=offer["gpu"], provider=offer["provider"], instance=offer["instance_type"],
        region=region, pricing=t["pricing_spot" if offer["spot"] else "pricing_on_demand"],
        price=money(offer["price_per_hour"], "USD", language), hours=hours(offer["est_hours"], language), cost=cost)


def _spot_sentence(offer: dict[str, Any], spec: dict[str, Any], language: str) -> str | None:
    """Why spot or on-demand, from the spot-risk result carried in the offer's reasons."""
    t = templates(language)
    spot_reason = next((r for r in offer.get("reasons", []) if r["code"].startswith("spot_")), None)
    if offer["spot"] and spot_reason is not None:
        params = spot_reason["params"]
        interval_h = params.get("checkpoint_interval_hours")
        return t["spot_yes" if interval_h else "spot_yes_no_interval"].format(
            savings=money(params.get("savings_usd") or 0.0, "USD", language),
            preemptions=number(params.get("expected_preemptions") or 0.0, language, 1),
            interval=interval(interval_h, language) if interval_h else "")
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


def _memory_sentence(estimate: dict[str, Any], vram: float | None, language: str) -> str:
    """The memory estimate with its breakdown."""
    b = estimate["breakdown_gib"]
    g = lambda key: number(b.get(key, 0.0), language, GIB_ROUND)  # noqa: E731 - local formatter
    other = b.get("temporary", 0.0) + b.get("overhead", 0.0)
    return templates(language)["memory"].format(
        per_gpu=number(estimate["per_gpu_gib"], language, GIB_ROUND),
        vram=number(vram, language, 0) if vram else "?", weights=g("weights"), gradients=g("gradients"),
        optimizer=g("optimizer"), activations=g("activations"), other=number(other, language, GIB_ROUND))


def _verdict_sentence(offer: dict[str, Any], language: str) -> str | None:
    """The layout verdict of the recommended offer."""
    t = templates(language)
    key = f"verdict_{offer.get('topology_verdict')}"
    if key not in t:
        return None
    params = offer.get("topology_params") or {}
    layout = t["layout_names"].get(params.get("layout") or "", params.get("layout") or "")
    return t[key].format(gpus=offer["total_gpus"], nodes=offer.get("nodes", 1), layout=layout,
                         comm=percent(params.get("exposed_comm_share"), language))


def _single_card_sentence(single: dict[str, Any] | None, language: str) -> str | None:
    """What a single big card needs, and the cheapest fix when it does not fit."""
    if not single:
        return None
    t = templates(language)
    fit = single.get("fit") or {}
    if fit.get("fits", True) or not fit.get("fixes"):
        return t["single_card_needed"].format(needed=number(single["per_gpu_gib"], language, GIB_ROUND))
    fix = fit["fixes"][0]
    name = t["fixes"].get(fix["code"], fix["description"]).format(count=fix["changes"].get("num_gpus", ""))
    return t["no_single_card"].format(vram=number(fit["vram_gib"], language, 0),
                                      needed=number(single["per_gpu_gib"], language, GIB_ROUND), fix=name,
                                      reach=number(fix["per_gpu_gib"], language, GIB_ROUND))


def _limits_sentences(offer: dict[str, Any], spec: dict[str, Any], language: str) -> list[str]:
    """Budget and deadline, when the user gave them."""
    t = templates(language)
    lines = []
    budget = spec.get("budget")
    if budget:
        text = money(budget["amount"], budget["currency"], language)
        lines.append(t["budget_ok" if offer.get("meets_budget") is not False else "budget_over"].format(budget=text))
    deadline = spec.get("deadline_hours")
    if deadline:
        key = "deadline_ok" if offer.get("meets_deadline") is not False else "deadline_miss"
        lines.append(t[key].format(deadline=number(deadline, language, 0)))
    return lines


def _citation_lines(citations: list[dict[str, Any]], language: str) -> list[str]:
    """Numbered source lines for the cited FAQ entries."""
    if not citations:
        return []
    return [templates(language)["sources_title"]] + [f"- [{i}] {c['title']}" for i, c in enumerate(citations, 1)]


def recommendation(state: dict[str, Any]) -> str:
    """The full answer for a job: recommended offer, why, alternatives, memory, layout, limits, sources."""
    language = state["language"]
    t = templates(language)
    spec, ranking = state["spec"], state.get("ranking") or {}
    offers = ranking.get("offers") or []
    paragraphs: list[str] = []
    if not offers:
        excluded = ", ".join(f"{t['excluded_names'].get(reason, reason)} {number(count, language, 0)}"
                             for reason, count in sorted((ranking.get("excluded") or {}).items(),
                                                         key=lambda item: -item[1]))
        paragraphs.append(t["no_offer"].format(excluded=excluded or "-"))
        single = _single_card_sentence(state.get("single_gpu_estimate"), language)
        if single:
            paragraphs.append(single)
    else:
        top = offers[0]
        paragraphs.append(_headline(top, ranking, spec, language))
        spot = _spot_sentence(top, spec, language)
        if spot:
            paragraphs.append(spot + _cite(state, "spot"))
        paragraphs.extend(_limits_sentences(top, spec, language))
        alternatives = [_offer_line(key, offer, language) for key, offer in
                        (("alt_cheapest", ranking.get("cheapest_that_fits")), ("alt_fastest", ranking.get("fastest")))
                        if offer and not same_rental(offer, top)]
        if alternatives:
            paragraphs.append(t["alternatives_title"] + "\n" + "\n".join(f"- {line}" for line in alternatives))
        if state.get("estimate"):
            paragraphs.append(_memory_sentence(state["estimate"], top.get("vram_gib_per_gpu"), language)
                              + _cite(state, "memory"))
        verdict = _verdict_sentence(top, language)
        if verdict:
            paragraphs.append(verdict + _cite(state, "interconnect"))
        single = _single_card_sentence(state.get("single_gpu_estimate"), language)
        if single and top["total_gpus"] > 1:
            paragraphs.append(single)
    assumptions = state.get("assumption_lines") or []
    if assumptions:
        paragraphs.append(t["assumptions_title"] + "\n" + "\n".join(f"- {line}" for line in assumptions))
    paragraphs.append("\n".join(_citation_lines(state.get("citations") or [], language)))
    return "\n\n".join(p for p in paragraphs if p)


def _cite(state: dict[str, Any], topic: str) -> str:
    """A ' [n]' marker when the answer cites the entry for `topic`."""
    for index, citation in enumerate(state.get("citations") or [], 1):
        if citation.get("topic") == topic:
            return f" [{index}]"
    return ""


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


def assumption_lines(spec: dict[str, Any], request_defaults: dict[str, Any], ranking: dict[str, Any],
                     language: str) -> list[str]:
    """The defaults the tools filled for this job and the data they used, in the user's language."""
    t = templates(language)
    lines = []
    if not spec.get("dataset_tokens") and not spec.get("dataset_examples") and ranking.get("tokens"):
        lines.append(t["assumption_dataset"].format(tokens=token_count(ranking["tokens"], language)))
    if spec.get("seq_len") is None:
        lines.append(t["assumption_seq_len"].format(seq_len=number(request_defaults["seq_len"], language, 0)))
    if spec.get("micro_batch_size") is None:
        lines.append(t["assumption_micro_batch"].format(batch=request_defaults["micro_batch_size"]))
    if spec.get("gradient_checkpointing") is None:
        lines.append(t["assumption_checkpointing"])
    if ranking.get("memory_margin") is not None:
        lines.append(t["assumption_margin"].format(share=percent(1 - ranking["memory_margin"], language)))
    if (ranking.get("catalog") or {}).get("snapshot_date"):
        lines.append(t["assumption_prices"].format(date=ranking["catalog"]["snapshot_date"]))
    fx = ranking.get("fx")
    if fx:
        digits = max(4, 3 - math.floor(math.log10(fx["rate"]))) if fx["rate"] > 0 else 4
        lines.append(t["assumption_fx"].format(currency=fx["from_currency"], rate=number(fx["rate"], language, digits),
                                               date=fx["date"]))
    return lines


def ask_back(missing: list[str], language: str) -> str:
    """Ask for the fields the job cannot be sized without."""
    t = templates(language)
    names = [t["missing_names"][name] for name in missing]
    return t["ask_back"].format(missing=t["and"].join(names))


def fixed_text(key: str, language: str) -> str:
    """A fixed message (refusal, out of scope, unsupported language, fallback note)."""
    return templates(language)[key]
