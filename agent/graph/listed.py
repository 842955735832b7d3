"""Turns about one of the offers an answer listed ("the one in Europe you listed", "the second option", "quella su
lambda", "yang kedua"): which listed rental it is, by its place in the list or by what it has (a region, a GPU, a
provider); a question about it is answered with its figures against the plan, and taking it ("take the second one",
"prendo quella in Europa", "ambil yang kedua") is a change that pins the job to that rental (pins: its GPU, count,
provider and region). The thread keeps the rentals its last answer showed, in the order it showed them (`listed`), so
a reference is read against what the user saw. The act of every other turn is agent.graph.acts'."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from agent.graph.acts.classify import asks_fit, is_question
from agent.graph.acts.cues import acts_words, has
from agent.graph.acts.texts import act_templates, excluded_reason, gap_words, rental, with_limits
from agent.graph.focus import FOCUS_STEP
from agent.writing import SUMMARY_KEYS, alternatives_shown, same_rental
from tools.catalog import expand_region, place_names

LISTED_KEPT = 6
"""The most rentals of one answer a later turn may refer to (the plan first, then the others it showed)."""
LISTED_KEYS = (*SUMMARY_KEYS, "meets_budget", "meets_deadline")
"""What the thread keeps of a listed rental: what tells it apart, its figures and the limits it meets."""
CLOSE_SHARE = 0.15
"""Offers within this share of the plan's cost count as close alternatives."""


@dataclass(frozen=True)
class Reference:
    """What a message says of the listed rental it means: its place in the list (1 = the plan), or the regions,
    GPU and providers it has."""

    place: int | None = None
    regions: tuple[str, ...] = ()
    gpu: str | None = None
    providers: tuple[str, ...] = ()

    def as_state(self) -> dict[str, Any]:
        """The reference as the thread's state keeps it (plain JSON)."""
        return {"place": self.place, "regions": list(self.regions), "gpu": self.gpu, "providers": list(self.providers)}

    @staticmethod
    def of_state(data: dict[str, Any]) -> Reference:
        """The reference a turn's state kept."""
        return Reference(
            place=data.get("place"),
            regions=tuple(data.get("regions") or ()),
            gpu=data.get("gpu"),
            providers=tuple(data.get("providers") or ()),
        )

    def wishes(self) -> dict[str, Any]:
        """The job fields that ask for what the reference names (its region, GPU or providers)."""
        found: dict[str, Any] = {}
        if self.regions:
            found["regions"] = list(self.regions)
        if self.gpu:
            found["gpu"] = self.gpu
        if self.providers:
            found["providers"] = list(self.providers)
        return found


def listed_of(offers: list[dict[str, Any] | None]) -> list[dict[str, Any]]:
    """The rentals an answer showed, in the order it showed them (each once), with what a later turn reads of them."""
    found: list[dict[str, Any]] = []
    for offer in offers:
        if offer and not any(same_rental(offer, seen) for seen in found):
            found.append({key: offer.get(key) for key in LISTED_KEYS})
    return found[:LISTED_KEPT]


def listed_by_recommendation(state: dict[str, Any], top: dict[str, Any] | None, alternatives: bool) -> list[Any]:
    """What a job answer leaves listed: its plan and, where it shows them, the alternatives beside it (the thread's
    earlier listing when it has no plan)."""
    if top is None:
        return list(state.get("listed") or [])
    shown = alternatives_shown(state.get("ranking") or {}, top) if alternatives else []
    return listed_of([top, *(offer for _key, offer in shown)])


def listed_by_question(state: dict[str, Any]) -> list[Any]:
    """What a question's answer leaves listed: the plan and the offers it named (close alternatives, the cheapest and
    the fastest); the thread's earlier listing after any other answer."""
    ranking, topic = state.get("ranking") or {}, state.get("act_topic")
    offers = ranking.get("offers") or []
    if state.get("act") != "question" or not offers:
        return list(state.get("listed") or [])
    plan = offers[0]
    if topic in ("region", "provider"):
        return listed_of([plan, *close_offers(state, plan)])
    if topic in ("alternatives", "cheapest", "fastest"):
        ends = {"alternatives": ("cheapest_that_fits", "fastest"), "cheapest": ("cheapest_that_fits",)}
        return listed_of([plan, *(ranking.get(key) for key in ends.get(topic, ("fastest",)))])
    return list(state.get("listed") or listed_of([plan]))


@cache
def _ordinals(language: str) -> re.Pattern[str]:
    """The language's (and English's) ways to name a listed offer by its place: "the second option", "opzione 2"."""
    frames: list[str] = []
    for data in acts_words(language):
        words = data.get("ordinal_words") or {}
        ordinal = "(?P<word{n}>" + "|".join(sorted(map(re.escape, words), key=len, reverse=True)) + ")"
        for frame in data.get("ordinal_frames") or []:
            n = len(frames)
            frames.append(frame.replace("{ordinal}", ordinal.format(n=n)).replace("{digit}", f"(?P<digit{n}>[1-9])"))
    return re.compile("|".join(f"(?:{frame})" for frame in frames), re.I)


@cache
def _ordinal_values(language: str) -> dict[str, int]:
    """Every ordinal word of the language and English -> its number."""
    values: dict[str, int] = {}
    for data in acts_words(language):
        values.update({word.lower(): n for word, n in (data.get("ordinal_words") or {}).items()})
    return values


def _place_in_list(text: str, language: str) -> int | None:
    """The place in the list a message names ("the second option": 2), if any."""
    match = _ordinals(language).search(text)
    if match is None:
        return None
    for name, value in match.groupdict().items():
        if value:
            return int(value) if name.startswith("digit") else _ordinal_values(language).get(value.lower())
    return None


@cache
def _place_words() -> re.Pattern[str]:
    """Any place word of the region table ("Europe", "europea", "Eropa", "Jakarta"), adjectives included."""
    names = sorted(place_names(), key=len, reverse=True)
    return re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, names)) + r")(?![\w-])", re.I)


def place_keys(text: str) -> tuple[str, ...]:
    """The region-table keys of every place word in the text, adjectives included ("the European one": europe)."""
    return tuple(dict.fromkeys(place_names()[m.lower()] for m in _place_words().findall(text)))


def reference(text: str, language: str, parsed: dict[str, Any], gpus: tuple[str, ...]) -> Reference | None:
    """The listed rental a message refers to, or None when it refers to none: a place in the list, or a region,
    GPU or provider said with words that point back at a listing ("you listed", "che hai elencato", "tadi") or
    single one out of it ("the one in Europe", "the H100 one", "quella su lambda")."""
    place = _place_in_list(text, language)
    if place is not None:
        return Reference(place=place)
    if not (has("listed_ref", text, language) or has("listed_one", text, language)):
        return None
    regions = place_keys(text)
    found = Reference(
        regions=regions or tuple(parsed.get("regions") or ()),
        gpu=gpus[0] if len(gpus) == 1 else None,
        providers=tuple(parsed.get("providers") or ()),
    )
    return found if found.wishes() else None


def _matches(offer: dict[str, Any], ref: Reference) -> bool:
    """Whether a listed rental has what the reference names."""
    if ref.regions and not any(expand_region(place).matches(offer.get("region")) for place in ref.regions):
        return False
    if ref.gpu and offer.get("gpu") != ref.gpu:
        return False
    return not ref.providers or offer.get("provider") in ref.providers


def resolve(ref: Reference, listed: list[dict[str, Any]]) -> int | None:
    """The index in `listed` of the rental the reference means (another than the plan where one matches), or None."""
    if ref.place is not None:
        return ref.place - 1 if 1 <= ref.place <= len(listed) else None
    found = [index for index, offer in enumerate(listed) if _matches(offer, ref)]
    others = [index for index in found if index > 0]
    return (others or found or [None])[0]


def pins(offer: dict[str, Any]) -> dict[str, Any]:
    """The job fields that make its plan this rental: its GPU, GPU count, provider and region."""
    found: dict[str, Any] = {"gpu": offer["gpu"], "num_gpus": offer["total_gpus"], "providers": [offer["provider"]]}
    if offer.get("region"):
        found["regions"] = [offer["region"]]
    return found


def listed_update(state: dict[str, Any], text: str, gpus: tuple[str, ...]) -> dict[str, Any] | None:
    """The act of a turn about a listed rental: taking it is a change to that rental (to what the reference names
    where none of those listed has it), anything else a question about it; None for any other turn. Besides its act
    it sets what a focus turn does (agent.graph.focus.FOCUS_STEP: a turn about the job, nothing cleared or named)."""
    listed, language = state.get("listed") or [], state["language"]
    if not listed:
        return None
    if any(has(cue, text, language) for cue in ("condition", "hypothetical", "why_not")) or asks_fit(text, language):
        return None  # "if we weren't tied to AWS, the cheapest option?", "does it fit on a T4, that one of
        # colab?", "why is lambda not in the list?": a what-if, a fit question, a why-not, however it names an offer
    ref = reference(text, language, state.get("parsed") or {}, gpus)
    if ref is None:
        return None
    index = resolve(ref, listed)
    if index == 0:
        return None  # "why is the first offer in that region?": the plan itself, asked about as any plan question
    if has("take_listed", text, language) and not is_question(text, language) and "?" not in text:
        wished = pins(listed[index]) if index is not None else ref.wishes()
        if not wished:
            return None  # "take the sixth one" of five: nothing to take; read as any other turn
        return FOCUS_STEP | {"act": "change", "act_topic": "plain", "parsed": wished, "mentioned": list(wished)}
    return FOCUS_STEP | {"act": "question", "act_topic": "listed", "act_listed": ref.as_state()}


def answer_listed(state: dict[str, Any], offers: list[dict[str, Any]], db_path: Path) -> list[str]:
    """The listed rental a question is about, with its figures against the plan; where none of those listed has
    what it names, the best plan that does (ranked as the plan is), said as not listed."""
    from agent.graph.acts.alternatives import top_for

    language, spec = state["language"], state["spec"]
    t = act_templates(language)
    ref, plan = Reference.of_state(state.get("act_listed") or {}), offers[0]
    shown = list(state.get("listed") or []) or listed_of(offers[:1])
    index = resolve(ref, shown)
    if index is None and ref.place is not None:
        return [
            t["listed_beyond"].format(
                count=len(shown), place=ref.place, rental=rental(plan, spec, language), where=_where(plan, t)
            )
        ]
    if index is not None and same_rental(shown[index], plan):
        return [t["listed_is_plan"].format(rental=rental(plan, spec, language), where=_where(plan, t))]
    key, other = "listed_line" if ref.place else "listed_named", shown[index] if index is not None else None
    if other is None:
        other, ranking = top_for(state, ref.wishes(), db_path)
        if other is None:
            return [t["listed_none_at_all"].format(reason=excluded_reason(ranking, language))]
        key = "listed_none"
    gaps = gap_words(other, plan, language)
    return [
        t[key].format(
            place=(index or 0) + 1,
            rental=with_limits(other, spec, language),
            where=_where(other, t),
            plan=rental(plan, spec, language),
            gaps=t["and"].join(gaps) or t["listed_no_gap"],
        )
    ]


def _where(offer: dict[str, Any], t: dict[str, Any]) -> str:
    """' in europe-central-1': the rental's region, where the catalog names one."""
    return str(t["listed_where"]).format(region=offer["region"]) if offer.get("region") else ""


def close_offers(state: dict[str, Any], plan: dict[str, Any]) -> list[dict[str, Any]]:
    """Up to three offers within CLOSE_SHARE of the plan's cost, each from another provider or region."""
    close, seen = [], {(plan["provider"], plan.get("region"))}
    for offer in (state.get("ranking") or {}).get("offers") or []:
        key = (offer["provider"], offer.get("region"))
        if key in seen or offer["est_cost"] > (1 + CLOSE_SHARE) * plan["est_cost"]:
            continue
        seen.add(key)
        close.append(offer)
        if len(close) == 3:
            break
    return close
