"""The graph's act steps: read the act of a turn, make the job the act leaves, and write question, what-if and
inverse answers (agent/graph/build.py wires them; recommendations are still written by agent.writing.job)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.graph.acts import history, inverse, questions, what_if
from agent.graph.acts.classify import HARDWARE, asks_concept, question_topic, read_act
from agent.graph.acts.cues import has
from agent.graph.acts.gpu_mentions import named_gpus
from agent.graph.acts.subject import PLAN_ACTS
from agent.graph.acts.texts import act_templates, rental
from agent.graph.focus import focus_update, number_alone
from agent.graph.listed import listed_by_question, listed_update, place_keys
from agent.parsing import asks_to_act_for_user
from agent.writing import rental_summary, verdict

WHY_NOT_ELSEWHERE = HARDWARE | {"providers", "regions"}
"""Fields a why-not names to weigh other hardware or another place against the plan (not the fit answer's card)."""
INTENT_OF_ACT = {
    "new_job": "job_request",
    "change": "follow_up",
    "undo": "follow_up",
    "question": "follow_up",
    "what_if": "follow_up",
    "inverse": "follow_up",
    "faq": "faq",
    "ask_back": "job_request",
}


def _changes(state: dict[str, Any]) -> set[str]:
    """The fields the message sets to a value the job does not have ("no, restiamo su LoRA. Budget 150 euro": the
    budget)."""
    return set(state.get("mentioned") or []) - _restated(state)


def act_update(state: dict[str, Any], intent: str, request: str, preference: str | None) -> dict[str, Any]:
    """The act of this turn and the intent/request the rest of the graph reads from it; the thread's focus lasts
    one turn (agent.parsing.focus)."""
    text = state.get("message") or ""
    has_job = bool(state.get("spec"))
    if state.get("changes") or not text.strip():  # a button press: a change (or a new job) without text
        return {"act": "change" if has_job else "new_job", "act_topic": "plain", "focus": None}
    if asks_to_act_for_user(text):  # keys, logins, "launch it for me": declined, with what to do instead
        return {"act": "declined", "act_topic": "credentials", "intent": "out_of_scope", "focus": None}
    gpus = named_gpus(text)
    about_job = has_job and intent != "injection"
    focus = (focus_update(state, text, gpus) or listed_update(state, text, gpus)) if about_job else None
    update = focus or _act_update(state, text, gpus, intent, request, preference)
    if has_job and update["act"] in ("declined", "faq") and intent != "injection":
        update = number_alone(state, text) or update  # "16", which nothing else reads
    return {"focus": None} | update


def _act_update(
    state: dict[str, Any], text: str, gpus: tuple[str, ...], intent: str, request: str, preference: str | None
) -> dict[str, Any]:
    """act_update for a turn that is no focus turn."""
    has_job = bool(state.get("spec"))
    if has_job and state.get("pending") and has("keep_as_is", text, state["language"]) and not _changes(state):
        # "no, keep it as it was" right after a what-if: its proposal turned down, the plan as it stands answered
        topic = question_topic(text, state["language"], set(), gpus) or "plain"
        return {"act": "question", "act_topic": topic, "pending": None, "intent": "follow_up", "request": "plain"}
    if has("write_other", text, state["language"]):  # "can you write my thesis abstract too?": not our work
        return {"act": "declined", "act_topic": "plain", "intent": "out_of_scope"}
    # "what does 'billed per second' mean?" asks what a term means, the FAQ's to answer ("btw, the weather?" is no
    # such question, "who bills per second?" a tool's); "rispetto a prima quanto spendo?" compares with a plan; "with
    # the same budget, the longest context?" asks for a limit
    if (
        request == "off_topic"
        and question_topic(text, state["language"], set(state.get("mentioned") or []), gpus) is None
        and not any(has(cue, text, state["language"]) for cue in ("definition", "earlier_plan", "inverse"))
    ):
        return {"act": "declined", "act_topic": "plain"}  # "what's the weather in Rome tomorrow?"
    reading = read_act(
        text,
        state.get("mentioned") or [],
        language=state["language"],
        base_intent=intent,
        has_job=has_job,
        pending=bool(state.get("pending")),
        gpus=gpus,
        preference=preference,
        restated=_restated(state),
    )
    update: dict[str, Any] = {
        "act": reading.act,
        "act_topic": reading.topic,
        "act_clears": list(reading.clears),
        "act_drops": list(reading.drops),
        "act_currency": reading.currency,
        "act_gpus": list(reading.gpus),
        "act_count": reading.count,
    }
    if has_job and reading.act in ("question", "what_if") and _outside_the_job(state, text):
        # "kalau di luar Indonesia berapa?" on a job kept in Indonesia: a what-if without that limit
        update.update(act="what_if", act_topic="cost", act_clears=[*update["act_clears"], "regions"])
    if reading.act != "declined" and request == "off_topic":
        update["request"] = "plain"
    if reading.act == "declined":
        update["intent"] = intent if intent in ("injection", "out_of_scope") else "out_of_scope"
    elif reading.act in INTENT_OF_ACT:
        update["intent"] = (
            INTENT_OF_ACT[reading.act] if has_job or reading.act in ("faq", "new_job", "ask_back") else intent
        )
    named = _named_settings(state)
    if (
        named
        and reading.act in ("change", "new_job", "undo")
        and has("undo", text, state["language"])
        and history.with_settings(state.get("history"), named) is not None
    ):  # "back to the QLoRA plan": the latest plan that had it
        update.update(act="undo", act_topic="plain", act_target=named, intent="follow_up")
    elif named and reading.act == "undo" and not reading.count and not state.get("history"):
        update.update(act="change", act_topic="plain", intent="follow_up")  # "torna alle 2 epoche", no plan before
    elif named and reading.act in ("change", "what_if", "question") and _asks_of_plan_named(state, text, named):
        # "what did the 4B plan cost compared to this one?": an earlier plan named by a setting it had
        update.update(act="question", act_topic="earlier", intent="follow_up", request="plain")
    awaited = set(state.get("awaiting_fields") or []) if not state.get("last_top") else set()
    if awaited and (
        reading.act == "change"
        or (reading.act in ("what_if", "question") and awaited & _answers(state.get("mentioned") or []))
    ):  # completes the job an ask-back asked about ("Llama 3.1 8B", "maybe Llama 3.2 1B?"): the thread's first plan
        update["act"] = "new_job"
    elif (
        awaited
        and reading.act in ("faq", "declined")
        and any(has(cue, text, state["language"]) for cue in ("job_intent", "ask_gpu"))
        and not asks_concept(text, state["language"])
    ):  # "no idea which model, the cheap one": the job the ask-back waits on, still without what it needs
        update.update(act="ask_back", intent="follow_up", request="plain")
    if state.get("awaiting_new") and set(state.get("mentioned") or []) & {"model", "params_b"}:
        update.update(act="new_job", intent="job_request")  # the other person's job the ask-back asked about
    update["awaiting_new"] = False
    if reading.act in PLAN_ACTS or reading.act == "undo" or (reading.act == "change" and reading.topic == "adopt"):
        update["request"] = "plain"
    if reading.currency and reading.act == "question":
        update["display_currency"] = reading.currency  # later totals show it too
    return update


def _asks_of_plan_named(state: dict[str, Any], text: str, named: dict[str, Any]) -> bool:
    """Whether a question (or a request to compare) names an earlier plan by a setting it had and the job no longer
    has ("the 4B plan", "la versione con 2 GPU", "rencana pertama yang pakai spot")."""
    language, spec = state["language"], state.get("spec") or {}
    asks = "?" in text or any(has(cue, text, language) for cue in ("compare", "compare_request", "earlier_plan"))
    return (
        asks
        and has("plan_named", text, language)
        and any(spec.get(name) != value for name, value in named.items())
        and history.with_settings(state.get("history"), named) is not None
    )


def _outside_the_job(state: dict[str, Any], text: str) -> bool:
    """Whether the message asks about running outside the places the job is kept to ("outside the EU", "fuori
    dall'Italia", "di luar Indonesia")."""
    regions = set((state.get("spec") or {}).get("regions") or [])
    return bool(regions) and has("outside", text, state["language"]) and bool(regions & set(place_keys(text)))


def _answers(mentioned: list[str]) -> set[str]:
    """The fields an ask-back asked for that the mentioned ones answer (a size answers "which model?")."""
    return {*mentioned, *(["model"] if "params_b" in mentioned else [])}


def states_job(state: dict[str, Any]) -> bool:
    """An inverse question outside a job that states its own ("LoRA on Llama 3 8B: longest sequence?"): the job is
    the thread's from now on, and the question is answered about it."""
    return (
        state.get("act") == "inverse"
        and not state.get("spec")
        and bool(set(state.get("mentioned") or []) & {"model", "params_b"})
    )  # a job needs its model


def _restated(state: dict[str, Any]) -> set[str]:
    """The fields this message names with the value the job already has."""
    parsed, spec = state.get("parsed") or {}, state.get("spec") or {}
    return {name for name in state.get("mentioned") or [] if name in parsed and spec.get(name) == parsed[name]}


def _named_settings(state: dict[str, Any]) -> dict[str, Any]:
    """The job settings this message names with a value (what an undo may name the plan it returns to by)."""
    parsed = state.get("parsed") or {}
    return {name: parsed[name] for name in state.get("mentioned") or [] if name in parsed and name != "language"}


def merged_spec(
    state: dict[str, Any], previous: dict[str, Any] | None, parsed: dict[str, Any], mentioned: list[str]
) -> tuple[dict[str, Any] | None, dict[str, Any], list[str], dict[str, Any]]:
    """(base job, fields to apply, their names, extra state) for the act: plan acts keep the job, undo restores an
    earlier plan, adopting takes the pending what-if, clears set fields to none."""
    act, extra = state.get("act"), {}
    if act in PLAN_ACTS and not states_job(state):
        return previous, {}, [], extra
    if act == "undo":
        plans = list(state.get("history") or [])
        index = history.undo_target(plans, state.get("act_count"), state.get("act_target"))
        if index is None:
            extra["undo_missing"] = True
            return previous, {}, [], extra
        target = plans[index]
        extra["history"] = plans[:index]
        extra["restored"] = True
        if "preference" in target and target["preference"] != state.get("preference"):  # a switch undone too
            extra["preference"], extra["preference_changed"] = target["preference"], True
        restored = {k: v for k, v in target["spec"].items() if k != "language"}
        return None, restored, list(restored), extra
    if act == "change" and state.get("act_topic") == "adopt":
        if not state.get("pending"):
            return previous, {}, [], extra | {"adopt_missing": True}
        pending = dict(state["pending"])
        return previous, pending, [k for k in pending if k != "language"], extra | {"pending": None}
    cleared = {name: None for name in state.get("act_clears") or []}
    drops = set(state.get("act_drops") or [])
    parsed = {k: v for k, v in parsed.items() if k not in drops}
    mentioned = [name for name in mentioned if name not in drops]
    return previous, {**parsed, **cleared}, list(dict.fromkeys([*mentioned, *cleared])), extra


def history_after(state: dict[str, Any], previous: dict[str, Any] | None, new: dict[str, Any]) -> list[Any]:
    """The plan history after a change, a new job or a preference switch (the replaced plan kept, with the
    preference it was shown with, when it named its model); unchanged otherwise."""
    plans = list(state.get("history") or [])
    replaced = state.get("act") in ("change", "new_job") and previous and previous != new and _sized(previous)
    if replaced or (previous and state.get("preference_changed")):
        return history.pushed(plans, previous, state.get("last_top"), state.get("preference_before"))
    return plans


def _sized(spec: dict[str, Any]) -> bool:
    """Whether a job names its model (an ask-back's half-stated job had no plan to go back to)."""
    return bool(spec.get("model") or spec.get("params_b"))


def write_act(state: dict[str, Any], db_path: Path) -> dict[str, Any]:
    """The answer of a question, what-if or inverse turn (the job untouched), with its verdict."""
    language, act = state["language"], state["act"]
    t = act_templates(language)
    top, pending, word = None, state.get("pending"), None
    planless = not ((state.get("ranking") or {}).get("offers"))
    spot = "interruptible_ok" in (state.get("parsed") or {})  # allowing spot is a permission, not an offer to compare
    # after a fit answer, "why not QLoRA?" asks about the card that answer was about, as "and with QLoRA?" does, and
    # "why not LoRA on one H100?" about that card with that method
    parsed = set(state.get("parsed") or {})
    elsewhere = bool(state.get("act_gpus")) or bool(parsed & WHY_NOT_ELSEWHERE)
    on_the_card = state.get("last_kind") == "yes_no" and ("method" in parsed or not elsewhere)
    if act == "question" and state.get("act_topic") == "why_not" and (planless or spot or on_the_card):
        act = "what_if"  # "why not X?" asks what X would do, as "what if X?" does
    if act == "what_if" and state.get("spec"):
        kind, text, top, hyp, word = what_if.answer(state, db_path)
        pending = {k: v for k, v in hyp.items() if v != (state.get("spec") or {}).get(k)}
        if pending:  # something to switch to
            text += "\n\n" + t["unchanged_adopt"]
    elif act == "inverse":
        lines, top = inverse.answer(state, db_path)
        kind, text = "inverse", "\n\n".join(lines)
    else:
        lines, offered = questions.answer(state, db_path)
        offers = (state.get("ranking") or {}).get("offers") or []
        top = offers[0] if offers else None
        if not lines and top is not None:
            lines = [t["question_plain"].format(rental=rental(top, state["spec"], language))]
        if not lines:  # no offer can run the job: say why, as a recommendation would
            from agent.writing import no_offer_answer

            lines = [no_offer_answer(state, language)]
        kind, text = "question", "\n\n".join(lines)
        if offered:  # the other plan a why-not names: adoptable as a what-if's is
            pending = offered
            text += "\n\n" + t["unchanged_adopt"]
    return {
        "answer": text,
        "answer_kind": kind,
        "verdict": verdict(kind, top, state.get("spec"), word),
        "pending": pending,
        "changed": [],
        "last_kind": "yes_no" if kind == "yes_no" else state.get("last_kind"),
        "last_top": state.get("last_top") or rental_summary(top),
        "listed": listed_by_question(state),
    }


def preface(state: dict[str, Any]) -> str | None:
    """The line a recommendation starts with for its act: a replaced job, a restored plan, nothing to undo or adopt."""
    t = act_templates(state["language"])
    guess = _guess_line(state, t)
    if guess:
        return guess
    if state.get("undo_missing"):
        return t["nothing_to_undo"]
    if state.get("adopt_missing"):
        return t["nothing_to_adopt"]
    if state.get("restored"):
        return t["restored"]
    if state.get("act") == "new_job" and state.get("replaced_top"):
        top = state["replaced_top"]
        return t["new_job_replaces"].format(rental=rental(top, state.get("spec") or {}, state["language"]))
    return None


def _guess_line(state: dict[str, Any], t: dict[str, Any]) -> str | None:
    """'Did you mean Mistral 7B?' when the model name was matched fuzzily."""
    model = (state.get("spec") or {}).get("model")
    if not state.get("model_guess") or not model:
        return None
    from tools.models import lookup

    arch = lookup(model)
    return t["guess_model"].format(model=arch.name if arch else model)


def method_line(state: dict[str, Any]) -> str | None:
    """For a job that named no method: the default taken and what each method needs on one reference card."""
    if not state.get("default_method") or not state.get("spec"):
        return None
    from agent.writing import number, templates
    from contract.jobspec import JobSpec
    from tools.memory import cached_estimate, request_for_spec

    language = state["language"]
    t, names = act_templates(language), templates(language)["method_names"]
    items = []
    for method in ("full_finetune", "lora", "qlora"):
        spec = JobSpec.model_validate({**state["spec"], "method": method})
        request, _ = request_for_spec(spec, num_gpus=1, gpu="H100")
        items.append(
            t["method_item"].format(
                method=names.get(method, method), needed=number(cached_estimate(request).per_gpu_gib, language, 1)
            )
        )
    return t["default_method"].format(
        method=names.get(state["default_method"], state["default_method"]), gpu="H100", items="; ".join(items)
    )
