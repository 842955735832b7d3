"""What-if answers: the hypothetical job (the plan with this turn's fields) against the plan, the job untouched.

A fit question ("would it fit on a 4090?") is answered yes or no first; a spot what-if with the spot delta; a GPU
count with the count comparison; anything else as the hypothetical's best offer beside the plan's. The hypothetical
is kept as the thread's `pending` job, which "ok, do that" adopts."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from agent.graph.acts.classify import HARDWARE
from agent.graph.acts.subject import unbound
from agent.graph.acts.texts import act_templates, change_words, excluded_reason, with_limits
from contract.jobspec import JobSpec

COST_TOPICS = ("cost", "duration")
"""What-if topics that ask what a setting costs or how long it takes ("and with a 1024 context, what would it cost?")."""
MEMORY_FIELDS = frozenset(
    {"method", "model", "params_b", "precision", "optimizer", "seq_len", "micro_batch_size", "gradient_checkpointing"}
)
"""The job fields the memory per GPU depends on, beside the hardware (tools.memory's inputs)."""


def _on_the_fit_card(state: dict[str, Any]) -> bool:
    """Whether this what-if follows a fit answer and asks about the card again: it changes what the memory depends on
    or the hardware ("and with QLoRA?", "and two of them?"), and does not ask what that would cost or how long it
    would take ("and with a 1024 context, what would it cost?": the plan's cost); spot, epochs, data, money and place
    leave the fit as it was, so their what-if is about the plan."""
    parsed = set(state.get("parsed") or {})
    return (
        state.get("last_kind") == "yes_no"
        and state.get("act_topic") not in COST_TOPICS
        and bool(parsed & (MEMORY_FIELDS | HARDWARE))
    )


def hypothesis(state: dict[str, Any]) -> dict[str, Any]:
    """The plan with this turn's fields applied and its cleared fields emptied (what the what-if is about); after a
    fit answer, the hardware that answer was about stays the subject unless this turn names other hardware."""
    from agent.parsing import merge_spec

    parsed = {k: v for k, v in (state.get("parsed") or {}).items() if k != "language"}
    parsed |= {name: None for name in state.get("act_clears") or []}
    if _on_the_fit_card(state) and not set(parsed) & HARDWARE:  # "would it fit on a 4090?" then "and with QLoRA?"
        parsed = {k: v for k, v in (state.get("pending") or {}).items() if k in HARDWARE} | parsed
    spec, _ = merge_spec(state["spec"], {"language": state["language"], **parsed}, list(parsed))
    return spec.model_dump(mode="json")


class WhatIf(NamedTuple):
    """A what-if turn's answer: its kind and text, the offer it names, the hypothetical job, and a fit answer's
    "yes" or "no" (None for other kinds)."""

    kind: str
    text: str
    offer: dict[str, Any] | None
    hypothesis: dict[str, Any]
    answer: str | None = None


def answer(state: dict[str, Any], db_path: Path) -> WhatIf:
    """The answer of a what-if turn."""
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
    after_fit = state.get("act_topic") == "fit" or _on_the_fit_card(state)  # "and with two of them?"
    names_card = bool(set(state.get("parsed") or {}) & {"gpu", "gpu_memory_gb"})  # "if I only had one L40S?"
    if set(changed) == {"num_gpus"} and plan is not None and not after_fit and not names_card:
        compared = comparison(JobSpec.model_validate(spec), changed["num_gpus"], db_path, prefer)
        text = writing.compare({**state, "comparison": compared})
        return WhatIf("compare", text, compared.get("offer"), hyp)
    free = _carried_subject(state, hyp_spec)  # ranked as the plan is: a fit "no" comes with what does run the job
    ranking, _ = ranked(hyp_spec.model_copy(update=dict.fromkeys(free)) if free else hyp_spec, db_path, prefer)
    offers = ranking.get("offers") or []
    if set(changed) == {"interruptible_ok"}:
        text = writing.spot_delta({**state, "spec": hyp, "ranking": ranking})
        return WhatIf("delta", text, offers[0] if offers else None, hyp)
    about_cost = state.get("act_topic") in COST_TOPICS  # "how much with the A100?": its cost, not its fit
    if (changed and set(changed) <= HARDWARE and not about_cost) or after_fit:
        fit = reconciled(feasibility(hyp_spec), offers)
        setting = change_words({k: v for k, v in changed.items() if k not in HARDWARE}, language)
        text = writing.yes_no({**state, "spec": hyp, "feasibility": fit, "ranking": ranking, "fit_setting": setting})
        offer, _ = writing.rental_for(fit, offers)
        return WhatIf("yes_no", text, offer, hyp, "yes" if fit["fits"] else "no")
    asked = {k: v for k, v in hyp.items() if k in (state.get("parsed") or {}) and k != "language"}
    asked |= {name: None for name in state.get("act_clears") or [] if spec.get(name) is None}  # a limit it lacks
    if not changed and asked and plan is not None:  # what the job already has: the plan as it is, once
        rental = with_limits(plan, spec, language, state.get("display_currency"))
        return WhatIf(
            "what_if", t["whatif_already"].format(change=change_words(asked, language), rental=rental), plan, hyp
        )
    words = change_words(changed, language) or "-"
    if offers:
        lines = [
            t["whatif_line"].format(
                change=words, rental=with_limits(offers[0], hyp, language, state.get("display_currency"))
            )
        ]
    else:
        lines = [t["whatif_none"].format(change=words, reason=excluded_reason(ranking, language))]
        limit = writing.binding_limit_line(ranking, language)  # what binds, with its figures
        if limit:
            lines.append(limit)
    if plan is not None:
        lines.append(t["now_line"].format(rental=with_limits(plan, spec, language, state.get("display_currency"))))
    return WhatIf("what_if", "\n\n".join(lines), offers[0] if offers else None, hyp)


def _carried_subject(state: dict[str, Any], hyp: JobSpec) -> list[str]:
    """The fields of the thread's hardware subject the hypothesis is ranked without (agent.graph.acts.subject.unbound),
    but for those this turn names."""
    parsed = state.get("parsed") or {}
    return [name for name in unbound(state.get("hardware_subject") or {}, hyp) if name not in parsed]
