"""The hardware a question asks about is its subject, not a wish (a fit question's card, the two GPUs a first message
weighs): which of the job's hardware fields the plan is ranked without, and which rental the turns after such an
answer are about (the one it showed)."""

from __future__ import annotations

from typing import Any

from agent.graph.acts.classify import HARDWARE, is_question
from agent.graph.acts.cues import has, sentences
from agent.writing import same_rental
from contract.jobspec import JobSpec

PLAN_ACTS = frozenset({"question", "what_if", "inverse"})
"""Acts answered about the plan without changing the job."""


def hardware_subject(state: dict[str, Any], spec: JobSpec) -> dict[str, Any]:
    """The job's hardware that a question asked about and the plan is not bound to: {"fields": {name: value}, "no":
    whether it is the hardware of a fit "no"} (empty when none); `unbound` says which fields a turn ranks without.

    A new job's fit question: the card it asks about when the answer is no (the card is its subject, not a wish, so
    the "no" comes with what does run the job), the named GPU when the answer is a yes for another card offered beside
    it. A new job that asks which of two GPUs to rent ("two L40S or one H100?"): both, weighed in the answer. The
    thread keeps the cards, so "and with QLoRA?" is still asked about them, and the plan of its later turns is the
    rental that answer showed. The subject lasts while the job keeps those values and no change names that hardware
    (an undo back to that job finds it again)."""
    from agent.graph.questions import family_sizes

    fit = state.get("feasibility")
    if fit and fit["fits"] and spec.gpu and fit.get("gpu") not in family_sizes(spec.gpu):
        return {"fields": {"gpu": spec.gpu}, "no": False}  # "a 48 GB card (an L40S), or an H100?": yes for the card
    asked = [name for name in state.get("mentioned") or [] if name in HARDWARE]
    if state.get("act") == "new_job":
        if fit and not fit["fits"] and asked and not states_limit(state):
            return {"fields": {name: getattr(spec, name) for name in asked}, "no": True}
        if not fit and asked and compares_hardware(state):  # "two L40S or one H100?": both weighed, neither a wish
            return {"fields": {name: getattr(spec, name) for name in asked}, "no": False}
        return {}
    before = state.get("hardware_subject") or {}
    named = set(asked) if state.get("act") == "change" else set()  # an undo restores values: compared below
    fields = {k: v for k, v in (before.get("fields") or {}).items() if k not in named and getattr(spec, k) == v}
    return {"fields": fields, "no": bool(before.get("no"))} if fields else {}


def unbound(subject: dict[str, Any], spec: JobSpec) -> list[str]:
    """The fields of the hardware subject that `spec` still holds and its plan is ranked without: none for a "no" once
    the job fits that hardware ("ok, do that" after "with QLoRA it fits": the card is the plan's, as a first "yes" keeps
    it)."""
    from agent.graph.questions import feasibility

    fields = [name for name, value in (subject.get("fields") or {}).items() if getattr(spec, name) == value]
    if fields and subject.get("no") and feasibility(spec)["fits"]:
        return []
    return fields


def plan_basis(state: dict[str, Any], update: dict[str, Any] | None = None) -> JobSpec:
    """The thread's job with `update` applied, as its plan is ranked: without the hardware subject it is not bound to
    (what the update names stays), so another option is weighed on the same terms as the plan."""
    spec = JobSpec.model_validate({**(state.get("spec") or {}), **(update or {})})
    free = [name for name in unbound(state.get("hardware_subject") or {}, spec) if name not in (update or {})]
    return spec.model_copy(update=dict.fromkeys(free)) if free else spec


def compares_hardware(state: dict[str, Any]) -> bool:
    """Whether the message asks which of two (or more) GPUs it names to rent ("is renting two L40S better than one
    H100?", "I have two quotes, ... which should I take?"), with no statement that limits the hardware."""
    text, language = state.get("message") or "", state["language"]
    asks = "?" in text or is_question(text, language)
    return (
        len(state.get("act_gpus") or ()) >= 2 and asks and has("compare", text, language) and not _limit_stated(state)
    )


def states_limit(state: dict[str, Any]) -> bool:
    """Whether the question's hardware is a hard limit: the user's own cards ("my two 4090s"), or a statement beside
    the question ("we can't take more than one node"); then the plan keeps it, and may find nothing."""
    if has("own_hardware", state.get("message") or "", state["language"]):  # "my two 4090s": the user's own cards
        return True  # are what the question is about
    return _limit_stated(state)


def _limit_stated(state: dict[str, Any]) -> bool:
    """Whether a statement beside the question limits the hardware ("we can't take more than one node")."""
    text, language = state.get("message") or "", state["language"]
    return any(has("hard_limit", s, language) for s in sentences(text) if "?" not in s)


def shown_first(state: dict[str, Any], ranking: dict[str, Any]) -> dict[str, Any]:
    """The ranking of a turn about the plan (the job unchanged) with the rental the thread last showed first, where it
    is listed and not first already: a fit answer rents the card asked about ("yes, a 48 GB card holds it: rent 1x
    L40S"), which need not be the ranking's first offer, and what follows is about what the user was shown."""
    shown, offers = state.get("last_top"), ranking.get("offers") or []
    if state.get("act") not in PLAN_ACTS or not shown or not offers or state.get("prefer"):
        return ranking
    found = next((offer for offer in offers if same_rental(offer, shown)), None)
    if found is None or found is offers[0]:
        return ranking
    return {**ranking, "offers": [found, *(offer for offer in offers if offer is not found)]}
