"""What-if answers: the hypothetical job (the plan with this turn's fields) against the plan, the job untouched.

A fit question ("would it fit on a 4090?") is answered yes or no first; a spot what-if with the spot delta; a GPU
count with the count comparison; anything else as the hypothetical's best offer beside the plan's. The hypothetical
is kept as the thread's `pending` job, which "ok, do that" adopts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.graph.acts.texts import act_templates, change_words, excluded_reason, with_limits
from contract.jobspec import JobSpec

HARDWARE = frozenset({"gpu", "num_gpus", "gpu_memory_gb"})


def hypothesis(state: dict[str, Any]) -> dict[str, Any]:
    """The plan with this turn's fields applied and its cleared fields emptied (what the what-if is about); after a
    fit answer, the hardware that answer was about stays the subject unless this turn names other hardware."""
    from agent.parsing import merge_spec

    parsed = {k: v for k, v in (state.get("parsed") or {}).items() if k != "language"}
    parsed |= {name: None for name in state.get("act_clears") or []}
    if state.get("last_kind") == "yes_no" and not set(parsed) & HARDWARE:  # "would it fit on a 4090?" then "and
        parsed = {k: v for k, v in (state.get("pending") or {}).items() if k in HARDWARE} | parsed  # with QLoRA?"
    spec, _ = merge_spec(state["spec"], {"language": state["language"], **parsed}, list(parsed))
    return spec.model_dump(mode="json")


def answer(state: dict[str, Any], db_path: Path) -> tuple[str, str, dict[str, Any] | None, dict[str, Any]]:
    """(kind, text, offer the answer names, hypothetical job) for a what-if turn."""
    from agent import writing
    from agent.graph.questions import comparison, feasibility, ranked, reconciled

    language, spec = state["language"], state["spec"]
    t = act_templates(language)
    hyp = hypothesis(state)
    changed = {k: v for k, v in hyp.items() if v != spec.get(k) and k != "language"}
    plan_offers = (state.get("ranking") or {}).get("offers") or []
    plan = plan_offers[0] if plan_offers else None
    prefer = state.get("preference")
    hyp_spec = JobSpec.model_validate(hyp)
    if set(changed) == {"num_gpus"} and plan is not None and state.get("act_topic") != "fit":
        compared = comparison(JobSpec.model_validate(spec), changed["num_gpus"], db_path, prefer)
        text = writing.compare({**state, "comparison": compared})
        return "compare", text, compared.get("offer"), hyp
    ranking, _ = ranked(hyp_spec, db_path, prefer)
    offers = ranking.get("offers") or []
    if set(changed) == {"interruptible_ok"}:
        text = writing.spot_delta({**state, "spec": hyp, "ranking": ranking})
        return "delta", text, offers[0] if offers else None, hyp
    if (changed and set(changed) <= HARDWARE) or state.get("act_topic") == "fit" or state.get("last_kind") == "yes_no":
        fit = reconciled(feasibility(hyp_spec), offers)
        setting = change_words({k: v for k, v in changed.items() if k not in HARDWARE}, language)
        text = writing.yes_no({**state, "spec": hyp, "feasibility": fit, "ranking": ranking, "fit_setting": setting})
        offer, _ = writing.rental_for(fit, offers)
        return "yes_no", text, offer, hyp
    asked = {k: v for k, v in hyp.items() if k in (state.get("parsed") or {}) and k != "language"}
    if not changed and asked and plan is not None:  # what the job already has: the plan as it is, once
        rental = with_limits(plan, spec, language, state.get("display_currency"))
        return "what_if", t["whatif_already"].format(change=change_words(asked, language), rental=rental), plan, hyp
    words = change_words(changed, language) or "-"
    if offers:
        lines = [
            t["whatif_line"].format(
                change=words, rental=with_limits(offers[0], hyp, language, state.get("display_currency"))
            )
        ]
    else:
        lines = [t["whatif_none"].format(change=words, reason=excluded_reason(ranking, language))]
    if plan is not None:
        lines.append(t["now_line"].format(rental=with_limits(plan, spec, language, state.get("display_currency"))))
    return "what_if", "\n\n".join(lines), offers[0] if offers else None, hyp
