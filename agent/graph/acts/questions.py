"""Answers to questions about the plan, from tools, without changing the job: how many GPUs and nodes, which region
or provider, the total in another currency, the memory breakdown, the interconnect, the SkyPilot task, how long, how
much, and why this plan (comparisons and "why not X?" in agent.graph.acts.alternatives)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.graph import recap
from agent.graph.acts import history
from agent.graph.acts.alternatives import compare, not_first, why_not
from agent.graph.acts.texts import act_templates, display_cost, rental, with_limits
from agent.graph.acts.time_questions import cost, duration, within
from agent.graph.listed import answer_listed, close_offers
from agent.writing import (
    headline_reason,
    money,
    number,
    percent,
    same_rental,
    spot_delta,
    spot_sentence,
    templates,
)
from contract.jobspec import JobSpec


def count(state: dict[str, Any], plan: dict[str, Any], db_path: Path) -> list[str]:
    """How many GPUs and nodes the plan uses, and why not fewer."""
    from agent.graph.questions import comparison

    language, spec = state["language"], state["spec"]
    t = act_templates(language)
    nodes = int(plan.get("nodes") or 1)
    where = t["one_node"] if nodes == 1 else t["many_nodes"].format(nodes=nodes, per_node=plan.get("gpu_count"))
    lines = [t["count_line"].format(gpus=plan["total_gpus"], gpu=plan["gpu"], nodes=where)]
    if plan["total_gpus"] <= 1:
        return lines + [t["count_single"]]
    single = state.get("single_gpu_estimate") or {}
    vram = plan.get("vram_gib_per_gpu")
    if single.get("per_gpu_gib") and vram and single["per_gpu_gib"] > vram:
        lines.append(
            t["count_memory"].format(
                gpu=plan["gpu"], needed=number(single["per_gpu_gib"], language, 1), vram=number(vram, language, 0)
            )
        )
    fewer = plan["total_gpus"] // 2
    compared = comparison(JobSpec.model_validate(spec), fewer, db_path, state.get("preference"))
    other = compared.get("offer")
    if other is not None and not same_rental(other, plan):
        lines.append(t["count_fewer"].format(fewer=fewer, rental=with_limits(other, spec, language)))
    return lines


def region(state: dict[str, Any], plan: dict[str, Any]) -> list[str]:
    """The plan's region and provider, and the offers within 15 % of its cost."""
    language, spec = state["language"], state["spec"]
    t = act_templates(language)
    lines = [
        t["region_line"].format(region=plan["region"], provider=plan["provider"])
        if plan.get("region")
        else t["region_none"].format(provider=plan["provider"])
    ]
    close = [
        t["close_item"].format(
            gpus=offer["total_gpus"],
            gpu=offer["gpu"],
            provider=offer["provider"],
            where=f" ({offer['region']})" if offer.get("region") else "",
            cost=display_cost(offer["est_cost"], spec, language, state.get("display_currency")),
        )
        for offer in close_offers(state, plan)
    ]
    lines.append(t["close_line"].format(items="; ".join(close)) if close else t["close_none"])
    return lines


def currency(state: dict[str, Any], plan: dict[str, Any]) -> list[str]:
    """The plan's total in the asked currency, with the rate and its date."""
    from tools.fx import to_usd

    language, code = state["language"], state.get("act_currency") or "USD"
    t = act_templates(language)
    usd = money(plan["est_cost"], "USD", language)
    if code == "USD":  # the catalog's own currency: nothing to convert
        return [t["currency_same"].format(usd=usd)]
    try:
        one, used = to_usd(1.0, code)
    except ValueError:
        return [t["currency_unknown"].format(currency=code, usd=usd)]
    return [
        t["currency_line"].format(
            currency=code,
            converted=money(plan["est_cost"] / one, code, language),
            usd=usd,
            rate=number(1 / one, language, 4 if one > 0.5 else 0),
            date=used.date,
        )
    ]


def memory(state: dict[str, Any], plan: dict[str, Any]) -> list[str]:
    """The memory breakdown of the plan's layout (and what one card would need)."""
    from agent.writing import memory_line, single_card_line

    language = state["language"]
    lines = [memory_line(state, plan, language), single_card_line(state, plan, language), _experts_line(state)]
    return [line for line in lines if line]


def _experts_line(state: dict[str, Any]) -> str | None:
    """For a mixture-of-experts model: memory holds every expert (the total parameters), each token computes with
    the active ones (what the time uses); None for a dense model."""
    estimate = state.get("estimate") or {}
    total, active = estimate.get("total_params"), estimate.get("active_params")
    if not total or not active or active >= total:
        return None
    language = state["language"]
    return str(act_templates(language)["experts_line"]).format(
        total=number(total / 1e9, language, 1), active=number(active / 1e9, language, 1)
    )


LINK_NAMES = {"nvlink": "NVLink", "pcie": "PCIe", "infiniband": "InfiniBand"}
"""Links as their makers write them (the topology results keep them in lower case)."""


def topology(state: dict[str, Any], plan: dict[str, Any]) -> list[str]:
    """Whether the plan's interconnect is enough: its layout, link and communication share; PCIe figures beside."""
    language, spec = state["language"], state["spec"]
    t = act_templates(language)
    if plan["total_gpus"] <= 1:
        return [t["topology_single"]]
    params = plan.get("topology_params") or {}
    layout = templates(language)["layout_names"].get(plan.get("layout") or "", plan.get("layout") or "")
    link = str(
        params.get("link")
        or params.get("interconnect")
        or ("PCIe" if "pcie" in str(plan.get("topology_verdict")) else "NVLink")
    )
    link = LINK_NAMES.get(link.lower(), link)
    share = plan.get("exposed_comm_share")
    figures = {"layout": layout, "gpus": plan["total_gpus"], "gpu": plan["gpu"], "link": link}
    if int(plan.get("nodes") or 1) > 1 and params.get("inter_node_fabric"):  # what joins the nodes, too
        figures |= {
            "nodes": plan["nodes"],
            "fabric": params["inter_node_fabric"],
            "gbps": number(params.get("inter_node_gbps") or 0, language, 0),
            "assumed": t["topology_fabric_assumed"] if params.get("inter_node_assumed") else "",
        }
    key = "topology_line_nodes" if "nodes" in figures else "topology_line"
    lines = [t[key].format(**figures, comm=percent(share, language))]
    lines.append(t["topology_bound"] if (share or 0) > 0.25 else t["topology_enough"])
    pcie = next(
        (
            o
            for o in (state.get("ranking") or {}).get("offers") or []
            if o is not plan
            and o["total_gpus"] == plan["total_gpus"]
            and "pcie" in str((o.get("topology_params") or {}).get("link", "")).lower()
        ),
        None,
    )
    if pcie is not None and "pcie" not in link.lower():
        lines.append(
            t["topology_pcie_other"].format(
                rental=rental(pcie, spec, language), comm=percent(pcie.get("exposed_comm_share"), language)
            )
        )
    elif "pcie" not in link.lower():
        same = _over_pcie(spec, plan)
        if same is not None and same.params.get("layout"):
            lines.append(
                t["topology_pcie_same"].format(
                    gpus=plan["total_gpus"],
                    gpu=plan["gpu"],
                    comm=percent(same.params.get("exposed_comm_share"), language),
                    layout=templates(language)["layout_names"].get(str(same.params["layout"]), same.params["layout"]),
                )
            )
    return lines


def _over_pcie(spec: dict[str, Any], plan: dict[str, Any]) -> Any:
    """The topology check of the plan's own GPUs with PCIe between them instead of NVLink (None if it fails)."""
    from contract.jobspec import JobSpec
    from tools.jobtime import Candidate, build_workload, check_topology

    params = plan.get("topology_params") or {}
    try:
        return check_topology(
            build_workload(JobSpec.model_validate(spec)),
            Candidate(
                gpu=plan["gpu"],
                gpu_count=plan["total_gpus"],
                gpus_per_node=plan.get("gpu_count") or plan["total_gpus"],
                interconnect="pcie",
                inter_node_gbps=params.get("inter_node_gbps") if plan.get("nodes", 1) > 1 else None,
                vram_gib=plan.get("vram_gib_per_gpu"),
            ),
        )
    except (ValueError, TypeError):
        return None


def export(state: dict[str, Any], db_path: Path) -> list[str]:
    """The plan as a SkyPilot task, with its launch command."""
    from agent.export import build_task

    language = state["language"]
    t = act_templates(language)
    ranking = state.get("ranking") or {}
    result = {
        "spec": state["spec"],
        "offers": ranking.get("offers") or [],
        "estimate": state.get("estimate"),
        "language": language,
        "catalog": ranking.get("catalog"),
    }
    try:
        task = build_task(result, db_path=db_path)
    except ValueError as error:
        return [t["export_failed"].format(reason=str(error))]
    return [
        *([task.note] if task.note else []),
        t["export_intro"],
        f"```yaml\n{task.yaml.strip()}\n```",
        t["export_launch"].format(command=task.launch_command),
    ]


def why(state: dict[str, Any], plan: dict[str, Any]) -> list[str]:
    """Why this plan: cheapest or fastest that fits, the limits it meets, the headline reason, and its hours."""
    language, spec = state["language"], state["spec"]
    t = act_templates(language)
    ranking = state.get("ranking") or {}
    reasons = []
    if ranking.get("cheapest_that_fits") and same_rental(ranking["cheapest_that_fits"], plan):
        reasons.append(t["why_cheapest"])
    if ranking.get("fastest") and same_rental(ranking["fastest"], plan):
        reasons.append(t["why_fastest"])
    if (
        (spec.get("budget") or spec.get("deadline_hours"))
        and plan.get("meets_budget") is not False
        and plan.get("meets_deadline") is not False
    ):
        reasons.append(t["why_fits_limits"])
    lines = [t["question_plain"].format(rental=with_limits(plan, spec, language, state.get("display_currency")))]
    if reasons:
        lines.append(t["why_line"].format(reasons=t["and"].join(reasons)))
    return lines + not_first(ranking, language) + duration(state, plan)


def alternatives(state: dict[str, Any]) -> list[str]:
    """The cheapest plan that fits and the fastest, each with the limits it misses."""
    language, spec, ranking = state["language"], state["spec"], state.get("ranking") or {}
    t, currency = act_templates(language), state.get("display_currency")
    cheapest, fastest = ranking.get("cheapest_that_fits"), ranking.get("fastest")
    return [
        t["alternatives_line"].format(
            cheapest=with_limits(cheapest, spec, language, currency) if cheapest else "-",
            fastest=with_limits(fastest, spec, language, currency) if fastest else "-",
        )
    ]


def one_end(state: dict[str, Any], plan: dict[str, Any], end: str) -> list[str]:
    """The fastest (or cheapest) plan that fits, with the limits it misses, and the plan beside it when it is
    another one: the question names it, the thread keeps its plan."""
    language, spec, ranking = state["language"], state["spec"], state.get("ranking") or {}
    t, currency = act_templates(language), state.get("display_currency")
    found = ranking.get("fastest" if end == "fastest" else "cheapest_that_fits")
    if not found:
        return [t["question_plain"].format(rental=with_limits(plan, spec, language, currency))]
    line = t[f"{end}_line"].format(rental=with_limits(found, spec, language, currency))
    if same_rental(found, plan):
        return [line, t["end_is_plan"]]
    return [line, t["question_plain"].format(rental=with_limits(plan, spec, language, currency))]


def least_cost(state: dict[str, Any], plan: dict[str, Any]) -> list[str]:
    """What the job costs at least: the plan's cost and, when a plan that fits costs less, that one."""
    language, spec, ranking = state["language"], state["spec"], state.get("ranking") or {}
    t = act_templates(language)
    cheapest = ranking.get("cheapest_that_fits")
    if not cheapest or same_rental(cheapest, plan) or cheapest["est_cost"] >= plan["est_cost"]:
        return [*cost(state, plan), t["least_cost_is_plan"]]
    rental_text = with_limits(cheapest, spec, language, state.get("display_currency"))
    reason = headline_reason(ranking, language)  # why the plan is not that one (an unverified price, a margin)
    return [*cost(state, plan), t["least_cost_line"].format(rental=rental_text), *([reason] if reason else [])]


def spot_risk(state: dict[str, Any], plan: dict[str, Any]) -> list[str]:
    """The plan's spot use, from its spot-risk result: a spot plan's expected interruptions and saving; an on-demand
    plan where spot is allowed, the best spot offer's interruptions and why the plan is not on it; else why the plan
    is on-demand."""
    language, spec = state["language"], state["spec"]
    ranking = state.get("ranking") or {}
    rental = with_limits(plan, spec, language, state.get("display_currency"))
    t = act_templates(language)
    if (
        not plan.get("spot")
        and spec.get("interruptible_ok")
        and any(o.get("spot") for o in ranking.get("offers") or [])
    ):
        # an on-demand plan where spot is allowed: the best spot offer's expected interruptions, and why not it
        return [t["question_plain"].format(rental=rental), spot_delta(state)]
    sentence = spot_sentence(plan, spec, language, ranking.get("on_demand_alternative"))
    return [t["question_plain"].format(rental=rental), sentence or t["spot_not_asked"]]


def binding(state: dict[str, Any], plan: dict[str, Any]) -> list[str]:
    """What limits the plan: the ranking's binding limit when nothing meets the user's limits, else that nothing
    binds (the budget and deadline it meets, or that none were given)."""
    from agent.writing import binding_limit_line, limits_line

    language, spec, ranking = state["language"], state["spec"], state.get("ranking") or {}
    t = act_templates(language)
    lines = [t["question_plain"].format(rental=with_limits(plan, spec, language, state.get("display_currency")))]
    if ranking.get("binding_limit"):
        return [*lines, binding_limit_line(ranking, language) or ""]
    met = limits_line(plan, spec, language)
    limits = met[0].lower() + met[1:] if met else t["limits_none_given"]
    return [*lines, t["limits_nothing_binds"].format(limits=limits)]


def answer(state: dict[str, Any], db_path: Path) -> tuple[list[str], dict[str, Any] | None]:
    """The lines answering a question about the plan (its topic in `act_topic`), and the job change the answer
    offers to adopt, if any (a why-not's other plan)."""
    topic = state.get("act_topic") or "plain"
    offers = (state.get("ranking") or {}).get("offers") or []
    if topic == "why_not" and offers:
        return why_not(state, offers[0], db_path)
    return _lines(state, topic, offers, db_path), None


def _lines(state: dict[str, Any], topic: str, offers: list[dict[str, Any]], db_path: Path) -> list[str]:
    """The lines answering a question of any other topic."""
    if topic == "compare":
        return compare(state, db_path)
    if not offers:
        return []
    plan = offers[0]
    if topic == "alternatives":
        return alternatives(state)
    if topic in ("fastest", "cheapest"):
        return one_end(state, plan, topic)
    if topic == "least_cost":
        return least_cost(state, plan)
    if topic == "count":
        return count(state, plan, db_path)
    if topic == "export":
        return export(state, db_path)
    if topic == "duration":
        return duration(state, plan, db_path)
    if topic == "earlier":
        return history.compared(state, plan)
    if topic in ("summary", "recall"):  # "summarize the current job", "what budget did I give you?"
        return recap.summary(state, plan) if topic == "summary" else recap.recall(state, plan)
    if topic == "listed":  # "the one in Europe you listed": that rental against the plan
        return answer_listed(state, offers, db_path)
    simple = {
        "region": region,
        "provider": region,
        "currency": currency,
        "memory": memory,
        "topology": topology,
        "cost": cost,
        "within": within,
        "spot_risk": spot_risk,
        "limits": binding,
    }
    return simple.get(topic, why)(state, plan)
