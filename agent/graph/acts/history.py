"""The thread's short history of plans: each change or new job keeps the plan it replaced (its job, its lead offer and
the offer preference it was shown with), so undo can return; a preference switch ("the fastest?") replaces a plan
too."""

from __future__ import annotations

import re
from typing import Any

MAX_PLANS = 8


def pushed(
    history: list[dict[str, Any]] | None,
    spec: dict[str, Any] | None,
    top: dict[str, Any] | None,
    preference: str | None = None,
) -> list[dict[str, Any]]:
    """The history with the plan being replaced added last (the oldest dropped past MAX_PLANS)."""
    items = list(history or [])
    if spec:
        items.append({"spec": spec, "top": top, "preference": preference})
    return items[-MAX_PLANS:]


def undo_target(
    history: list[dict[str, Any]] | None, gpu_count: int | None, named: dict[str, Any] | None = None
) -> int | None:
    """Index of the plan undo returns to: the latest with the settings named ("back to the QLoRA plan") or with that
    GPU count, else the latest."""
    items = list(history or [])
    if not items:
        return None
    if named:
        return with_settings(items, named)
    if gpu_count is not None:
        for index in range(len(items) - 1, -1, -1):
            top = items[index].get("top") or {}
            if top.get("total_gpus") == gpu_count or items[index]["spec"].get("num_gpus") == gpu_count:
                return index
    return len(items) - 1


def with_settings(history: list[dict[str, Any]] | None, named: dict[str, Any]) -> int | None:
    """Index of the latest plan whose job has every named setting, None when no plan has them."""
    items = list(history or [])
    for index in range(len(items) - 1, -1, -1):
        if all(_has_setting(items[index], name, value) for name, value in named.items()):
            return index
    return None


def _has_setting(plan: dict[str, Any], name: str, value: Any) -> bool:
    """Whether a kept plan had the setting: in its job, or for a model size the size of its model ("the 8B plan"),
    for a GPU count the count its lead offer used ("the plan with 8 GPUs")."""
    spec = plan["spec"]
    if spec.get(name) == value:
        return True
    if name == "params_b" and spec.get("model"):
        size = re.search(r"(?<![\d.])(\d+(?:\.\d+)?)b(?![a-z])", str(spec["model"]))
        return size is not None and float(size.group(1)) == float(value)
    if name == "num_gpus" and spec.get("num_gpus") is None:
        return (plan.get("top") or {}).get("total_gpus") == value
    return False


def compared(state: dict[str, Any], plan: dict[str, Any]) -> list[str]:
    """The plan against an earlier one ("was the first plan cheaper?", "rispetto a prima quanto risparmio?"): the one
    whose job has the settings the question names ("than the LoRA plan"), else the first when it says so, else the
    last; what this plan changed, its rental and how the earlier one differs, from the figures each answer showed."""
    from agent.graph.acts.cues import has
    from agent.graph.acts.texts import act_templates, change_words, gap_words, rental

    language, spec = state["language"], state.get("spec") or {}
    t, plans = act_templates(language), [p for p in state.get("history") or [] if p.get("top")]
    named = {k: v for k, v in (state.get("parsed") or {}).items() if k != "language"}
    index = with_settings(plans, named) if named else None
    if index is None:
        index = 0 if has("first_plan", state.get("message") or "", language) else len(plans) - 1
    if index < 0:
        return [str(t["earlier_none"])]
    before = plans[index]
    differs = {k: spec.get(k) for k, v in before["spec"].items() if k != "language" and spec.get(k) != v}
    gaps = gap_words(before["top"], plan, language)
    return [
        str(t["earlier_line"]).format(
            now=rental(plan, spec, language),
            what=change_words(differs, language) or "-",
            before=rental(before["top"], spec, language),
            gaps=", ".join(gaps) or t["earlier_same"],
        )
    ]
