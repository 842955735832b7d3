"""Which dialogue act a turn is: cue lists per language (prompts/<lang>/words/acts.json) over the text, plus what
the parser read and what the thread holds. A field mentioned inside a question is the question's subject, never a
change of the job: only a statement (or a question that asks to change, "can you make it 4k?") edits the plan."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from agent.graph.acts.clearing import clears
from agent.graph.acts.cues import before_closing_question, cue_patterns, currency_asked, has
from agent.graph.acts.inverse import inverse_topic
from agent.parsing import HARDWARE_FIELDS, JOB_DEFINING, asks_both_ends, parse_fields

Act = Literal["new_job", "change", "undo", "question", "what_if", "inverse", "faq", "declined", "ask_back"]
ACTS: tuple[str, ...] = ("new_job", "change", "undo", "question", "what_if", "inverse", "faq", "declined", "ask_back")
HARDWARE = HARDWARE_FIELDS
TOPIC_ORDER: tuple[str, ...] = (
    "summary",
    "recall",
    "limits",
    "export",
    "currency",
    "topology",
    "why_not",
    "spot_risk",
    "count",
    "region",
    "provider",
    "memory",
    "duration",
    "cost",
    "why",
)
"""Question topics, most specific first: "why 24 GPUs?" is a count question, "which region?" a region one, "how many
interruptions?" one about the plan's spot use (spot_risk)."""
RENTING = re.compile(r"(?<![\w])(?:gpus?|rent\w*|noleggi\w*|affitt\w*|sewa\w*)(?![\w])", re.IGNORECASE)
"""Words of renting a GPU (what a third party's request is about)."""
PLAN_TOPICS = frozenset(
    {"limits", "memory", "cost", "least_cost", "duration", "topology", "export", "currency", "count", "spot_risk"}
)
"""Topics a question asks about the plan itself: the job's own settings named in it only restate the plan."""
RESTATED_TOPIC = {"budget": "limits", "deadline_hours": "limits", "regions": "region", "providers": "region"}
"""A limit a question names with the value the job already has, and the topic it asks about ("still under $150?":
the plan against its budget; "is it really in Jakarta?": the plan's region)."""


@dataclass(frozen=True)
class ActReading:
    """The act of one turn, its topic (what a question or inverse asks about) and the fields it clears."""

    act: Act
    topic: str = "plain"
    clears: tuple[str, ...] = ()
    drops: tuple[str, ...] = ()
    currency: str | None = None
    count: int | None = None
    gpus: tuple[str, ...] = ()


def is_question(text: str, language: str) -> bool:
    """A question: a question mark, or a question word first in a message that does not end as a statement ("why 24
    GPUs", "berapa node"; not "Meglio accorciare la sequenza a 2048.")."""
    stripped = text.strip()
    if "?" in stripped:  # "why only a few minutes? my colleague said 10 hours" is a question throughout
        return True
    if stripped.endswith((".", "!")):  # "Meglio accorciare la sequenza a 2048." decides; it does not ask
        return False
    start = cue_patterns(language).get("question_start")
    return bool(
        start
        and start.match(
            re.sub(r"^(?:ok(?:e|ay)?|and|but|e|ma|dan|tapi|so|quindi|jadi)[,\s]+", "", stripped, flags=re.I)
        )
    )


def asks_unmarked(text: str, language: str) -> bool:
    """A question typed without its mark: a question word anywhere ("klo ga pake spot brp", "e con le spot costa
    quanto", "and on spot how much") or a question tag at the end ("muat ga")."""
    cues = cue_patterns(language)
    words = cues.get("question_words")
    return bool(words and words.search(text)) or _tagged(text, language)


def asks_why_rather(text: str, language: str) -> bool:
    """ "X and not Y?" asked with a why ("why that card and not a T4?", "perché QLoRA e non LoRA?"): a contrast is a
    why-not only when the user asks why; "with LoRA rather than QLoRA, how much?" is a what-if."""
    return has("contrast", text, language) and has("why", text, language)


def question_topic(text: str, language: str, fields: set[str], gpus: tuple[str, ...]) -> str | None:
    """What a question about the plan asks, or None when no topic cue matches."""
    compares = has("compare", text, language) or (  # "the difference between LoRA and QLoRA here": this plan's
        has("difference", text, language) and has("this_case", text, language)  # (without "here", the FAQ's)
    )
    if (
        len(gpus) >= 2
        or (len(gpus) == 1 and compares and has("plan_ref", text, language))  # "2 H100s: compared with your plan?"
        or ("method" in fields and compares and not has("hypothetical", text, language))
    ):
        return "compare"
    if has("least_budget", text, language):  # "what's the smallest budget that works?": the job's least cost
        return "least_cost"
    for topic in TOPIC_ORDER:
        if has(topic, text, language) or (topic == "why_not" and asks_why_rather(text, language)):
            if topic == "recall" and (fields or not ("?" in text or is_question(text, language))):
                continue  # "I told you 3 epochs": a change, not a question about what was said
            if topic == "currency" and not currency_asked(text, language):
                continue
            if topic == "why_not" and not (gpus or fields & {"providers", "method", "interruptible_ok"}):
                continue
            return topic
    if has("nodes", text, language) and not fields - {"num_gpus"}:
        return "count"
    return None


def read_act(
    text: str,
    mentioned: list[str] | set[str],
    *,
    language: str,
    base_intent: str,
    has_job: bool,
    pending: bool,
    gpus: tuple[str, ...] = (),
    preference: str | None = None,
    restated: set[str] | frozenset[str] = frozenset(),
) -> ActReading:
    """The act of one message. `base_intent` is agent.parsing.intent's reading (job_request, follow_up, faq, out_of_scope,
    injection); `pending` says a what-if is waiting to be adopted; `gpus` are the GPU names the message names;
    `restated`: the mentioned fields whose value the job already has."""
    text = (text or "").strip()
    own = has("elsewhere", text, language) and not asks_fit(text, language)  # "..., does it fit?" asks about it
    drops = tuple(sorted(set(mentioned) & HARDWARE)) if own else ()
    fields = set(mentioned) - set(drops)  # "I have a 3090 at home but want cloud": one's own card is no wish
    cleared = set(clears(text, language)) if has_job else set()
    fields -= cleared & set(restated)  # "if we weren't tied to Azure"
    outside = fields & {"regions", "providers"} if has("outside", text, language) else set()
    if has_job and outside:  # "outside Azure", "provider selain AWS": no wish for it (an exclusion the job cannot
        # hold); on a job kept to it, the job without that limit
        asks = "?" in text or is_question(text, language)
        topic = "cost" if has("cost", text, language) else "plain"
        return ActReading("what_if" if asks else "change", topic, clears=tuple(sorted(outside)), gpus=gpus)
    if (
        fields
        and fields <= restated
        and (question_topic(text, language, set(), gpus) in PLAN_TOPICS or asks_which_end(text, language, preference))
    ):
        fields = set()  # "with mbs 8, how many GB per card?" on a job at mbs 8: a question about the plan
    if (
        has_job
        and fields
        and fields <= restated
        and set(fields) <= RESTATED_TOPIC.keys()
        and "?" in text
        and not cleared
        and not any(has(cue, text, language) for cue in ("inverse", "compare", "fit"))
    ):
        topics = {RESTATED_TOPIC[name] for name in fields}  # "still under $150?", "really in Jakarta?": the plan
        return ActReading("question", topics.pop() if len(topics) == 1 else "limits", gpus=gpus)  # against its own
    # "ok, 2 epochs: how long will it take?": a change stated before the question (not the hardware a question is
    # about, "a colleague quoted 2 A100s, how does that compare?", nor what the job already has)
    stated = _stated_before_question(text, language, fields - set(restated) - HARDWARE) if has_job else set()
    spot = _about_spot(text, language, fields, set(restated), gpus) if has_job else None
    if spot is not None:
        return spot
    if (
        has_job
        and "budget" in restated  # the job's own budget: a new amount in a fit question is a what-if of it
        and not set(mentioned) & HARDWARE
        and asks_fit(text, language)
        and not has("inverse", text, language)  # "with that budget, the largest model that fits?"
    ):
        return ActReading("question", "limits", gpus=gpus)  # "is our $50 enough?": the plan against the budget
    reading = _read(text, fields, language, base_intent, has_job, pending, gpus, preference, stated)
    return (
        ActReading(reading.act, reading.topic, reading.clears, drops, reading.currency, reading.count, reading.gpus)
        if drops
        else reading
    )


def _read(
    text: str,
    fields: set[str],
    language: str,
    base_intent: str,
    has_job: bool,
    pending: bool,
    gpus: tuple[str, ...],
    preference: str | None,
    stated: set[str],
) -> ActReading:
    """read_act without the own-hardware rule (`stated`: the fields a statement before the closing question sets)."""
    asks = (
        is_question(text, language)
        or (not fields & JOB_DEFINING and asks_unmarked(text, language))
        or has("compare_request", text, language)  # "Compare the 8-GPU and 16-GPU plans." asks
    )
    if base_intent == "injection":
        return ActReading("declined")
    if has_job and has("summary", text, language) and not has("change", text, language):
        return ActReading("question", "summary", gpus=gpus)  # "riassumimi il piano in tre righe": no 3 examples
    if (
        has("inverse", text, language)
        and not has("least_budget", text, language)
        and (asks or not fields - {"gpu", "num_gpus", "gpu_memory_gb", "budget", "method", "model", "params_b"})
    ):
        topic = inverse_topic(text, language)
        if topic == "setup" and fields & JOB_DEFINING:  # "<a job>. What's the smallest setup?": what to rent
            return ActReading("new_job", gpus=gpus)
        if not (topic == "model" and fields & {"model", "params_b"} and not asks):  # "GPT-2, the smallest one.":
            return ActReading("inverse", "smallest_gpu" if topic == "setup" else topic, gpus=gpus)  # that model
    general = (
        asks
        and asks_concept(text, language)
        and not fields & {"model", "params_b"}
        and not (has_job and preference)  # "what's cheaper?" in a job thread asks for the cheaper offer
    )  # "in general, ...", "what is ZeRO-3?": a question about the subject, not about this plan
    if not has_job:
        wants = has("job_intent", text, language) or has("ask_gpu", text, language)
        if wants and not fields & {"model", "params_b"} and not has("definition", text, language):
            # "I'd like to fine-tune a small model", "I have $300, what should I get?": nothing to size yet; the
            # facts said make the job the model will complete
            return ActReading("new_job" if fields else "ask_back")
        if general or (asks and fields and not fields & {"model", "params_b"} and base_intent == "job_request"):
            return ActReading("faq")  # "can I use spot for fine-tuning?": a question about a method, not a job
        return ActReading(_without_job(base_intent), gpus=gpus)
    if general:
        return ActReading("faq")
    if (
        not fields
        and has("third_party", text, language)
        and RENTING.search(text)
        and not has("own_job", text, language)
    ):
        return ActReading("ask_back", "third_party")  # "a colleague asks which GPU she should rent": her job
    if not fields and asks_both_ends(text):  # "which is cheapest and which is fastest?"
        return ActReading("question", "alternatives")
    if not fields and asks_which_end(text, language, preference):  # "which one is the fastest?": no switch
        return ActReading("question", "fastest" if preference == "speed" else "cheapest")
    if asks and has("earlier_plan", text, language):  # "was the first plan cheaper?": a comparison, not an undo
        return ActReading("question", "earlier", gpus=gpus)
    cleared = clears(text, language)
    hypothetical = asks and has("hypothetical", text, language)  # "torniamo al mio job: e se portassi ...?"
    undo = has("undo", text, language) and not has("language_switch", text, language)  # "balik ke bahasa Indonesia"
    if undo and not (fields & JOB_DEFINING and not asks) and not hypothetical:
        return ActReading("undo", count=_count_in(text))
    if has("adopt", text, language) and not fields:  # "ok, do that": an imperative even where "do" opens questions
        return ActReading("change", "adopt")  # (with no proposal waiting, there is nothing to adopt)
    if base_intent == "job_request" and fields & JOB_DEFINING and not asks:
        return ActReading("new_job", gpus=gpus)
    if asks:
        if stated:
            return ActReading("change", clears=cleared)
        return _question_act(text, fields, language, gpus, preference, cleared)
    topic = question_topic(text, language, fields, gpus)
    if topic in ("compare", "export", "memory", "currency", "topology") and (
        len(gpus) >= 2 or not fields or (topic == "export" and fields <= {"interruptible_ok"})
    ):  # "export the on-demand plan to SkyPilot": the plan it describes
        return ActReading("question", topic, currency=currency_asked(text, language), gpus=gpus)
    if cleared or fields:
        return ActReading("change", "clear" if cleared and not fields else "plain", clears=cleared)
    if topic:  # "the SkyPilot task, please", "esportalo per SkyPilot": a request about the plan
        return ActReading("question", topic, currency=currency_asked(text, language), gpus=gpus)
    if preference:
        return ActReading("change", "prefer")
    return ActReading(_without_job(base_intent) if base_intent != "follow_up" else "question", gpus=gpus)


def _about_spot(
    text: str, language: str, fields: set[str], restated: set[str], gpus: tuple[str, ...]
) -> ActReading | None:
    """A question about the plan's spot use ("on spot or not?", "the spot discount in percent?", "the spot and
    on-demand totals side by side"; "is spot worth it?" when the job allows spot already): the plan's spot use; a
    total asked on condition of spot the job does not allow yet ("if spot were allowed, the total?") proposes it."""
    if asks_concept(text, language):  # "secara umum, spot aman gak?": the FAQ's, not this plan's
        return None
    worth = "interruptible_ok" in restated and has("spot_worth", text, language)
    if not fields <= {"interruptible_ok"} or not (worth or has("spot_question", text, language)):
        return None
    topic = question_topic(text, language, fields, gpus)
    proposes = fields - restated and has("condition", text, language) and topic in ("cost", "duration")
    return ActReading("what_if" if proposes else "question", topic if proposes else "spot_risk", gpus=gpus)


def _without_job(base_intent: str) -> Act:
    """The act of a message outside a job (or one that is no part of it)."""
    return {"job_request": "new_job", "follow_up": "change", "faq": "faq"}.get(base_intent, "declined")  # type: ignore[return-value]


def _question_act(
    text: str, fields: set[str], language: str, gpus: tuple[str, ...], preference: str | None, cleared: tuple[str, ...]
) -> ActReading:
    """A question inside a job thread: what-if, a question about the plan, or a change asked as a question."""
    currency = currency_asked(text, language)
    topic = question_topic(text, language, fields, gpus)
    hypothetical = any(has(cue, text, language) for cue in ("hypothetical", "fit", "condition"))
    if fields == {"deadline_hours"} and not has("change", text, language) and not hypothetical:
        return ActReading("question", "within", gpus=gpus)  # "can it be done in 12 hours?": yes or no, job kept
    if fields and topic != "compare" and has("compare_request", text, language):  # "compare 8 GPUs with 16": that
        return ActReading("what_if", "plain", clears=cleared, gpus=gpus)  # setting beside the plan
    if topic == "memory" and fields and not has("compare", text, language):
        return ActReading("what_if", "fit", gpus=gpus)  # "how many GB with mbs 16?": the memory of that setting
    if topic in ("duration", "cost", "least_cost"):
        if fields - {"num_gpus"} or (topic != "duration" and fields) or cleared:  # "how much with QLoRA?", "how long
            topic = "cost" if topic == "least_cost" else topic  # on an H100?", "... without the limit?"
            return ActReading("what_if", topic, clears=cleared, gpus=gpus)
        return ActReading("question", topic, gpus=gpus)  # "how long on 8 GPUs?": the plan on that many GPUs
    if cleared and not fields and topic in (None, "region", "provider", "count", "plain"):  # "what would it cost
        topic = "cost" if has("cost", text, language) else "plain"  # with any provider and any region?"
        return ActReading("what_if", topic, clears=cleared, gpus=gpus)
    if topic in ("compare", "why_not", "export", "currency", "topology") or (topic and not hypothetical):
        return ActReading("question", topic or "plain", currency=currency, gpus=gpus)
    if cleared and hypothetical and not fields:  # "what if we drop the deadline?": compared without it
        return ActReading("what_if", "plain", clears=cleared, gpus=gpus)
    if fields or hypothetical:
        if has("change", text, language) and not hypothetical and fields:
            return ActReading("change", clears=cleared)  # "can we make it 4k instead?"
        if fields:
            return ActReading("what_if", "fit" if has("fit", text, language) else "plain", gpus=gpus)
        return ActReading("question", topic or "plain", gpus=gpus)
    if cleared:
        return ActReading("change", "clear", clears=cleared)
    if preference:
        return ActReading("change", "prefer")
    return ActReading("question", topic or "plain", currency=currency, gpus=gpus)


ASKING = ("condition", "hypothetical", "fit", "inverse", "why_not", "hearsay")
"""Cue lists that make a clause part of the question ("if we did 2 epochs", "why not B200"), or what others say
("some providers list a market price as on-demand"), not a statement of what the user wants."""


def _stated_before_question(text: str, language: str, fields: set[str]) -> set[str]:
    """The fields of `fields` the message states in a statement before its closing question: those clauses are no
    question themselves ("why not B200, ...") and hold no question mark, no condition ("if", "e se", "kalau", "and
    with") and no fit question; empty otherwise."""
    head = before_closing_question(text) if fields else None
    if head is None or "?" in head or is_question(head, language) or any(has(c, head, language) for c in ASKING):
        return set()
    return fields & set(parse_fields(head, language)[0])


def asks_concept(text: str, language: str) -> bool:
    """Cues of a question about a subject rather than this plan: in general, what a term means, billing, why
    something matters ("in general, ...", "what is ZeRO-3?", "why does bandwidth matter?" but not "... here?")."""
    return any(has(cue, text, language) for cue in ("general", "faq_topic", "definition")) or (
        has("matters", text, language) and not has("this_case", text, language)
    )


def asks_which_end(text: str, language: str, preference: str | None) -> bool:
    """A question with a question word about the faster or cheaper plan ("which one is the fastest?", "qual è la più
    economica?"): it asks which plan that is; "the cheapest one?" or "something faster?" wish to switch."""
    return preference is not None and is_question(text, language) and has("which_one", text, language)


def asks_fit(text: str, language: str) -> bool:
    """A clause (with the mark that ends it) asks whether the job fits ("I have a 4090 at home, does it fit?", "ci
    sta?"); "non basta, cosa noleggio?" says it does not and asks something else."""
    clauses = re.findall(r"[^.;!?,]+[.;!?,]*", text)
    return any(
        (clause.rstrip().endswith("?") or _tagged(clause, language)) and has("fit", clause, language)
        for clause in clauses
    )  # "sulla mia 4090 ci sta o no": a question tag asks as a mark does


def _tagged(text: str, language: str) -> bool:
    """A clause that ends with a question tag ("o no", "or not", "muat ga")."""
    tags = cue_patterns(language).get("question_tags")
    return bool(tags and re.search(rf"(?:{tags.pattern})\W*$", text.strip()))


def _count_in(text: str) -> int | None:
    """A GPU count named in an undo ("go back to the 2-GPU plan")."""
    match = re.search(r"(\d+)\s*[-\s]?\s*(?:x\s*)?(?:gpus?|schede|kartu|cards?)", text, re.I)
    return int(match.group(1)) if match else None
