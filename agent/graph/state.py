"""The graph's state: plain JSON-ready values only (pydantic models are dumped), so SQLite checkpoints stay portable."""

from __future__ import annotations

from typing import Any, TypedDict


class AgentState(TypedDict, total=False):
    """What flows through the graph in one turn; `spec` and `language` carry over to the thread's next turn."""

    message: str
    """This turn's user text."""
    explicit_language: str | None
    """Language the user (or the widget) chose for this turn, if any."""
    changes: dict[str, Any] | None
    """JobSpec field changes requested without text (Slack buttons)."""
    prefer: str | None
    """'cost' or 'speed': which ranked offer to put first."""
    language: str
    """Reply language (it, id or en); persists as the next turn's default."""
    supported: bool
    """False when the message is in a language the advisor does not speak."""
    parsed: dict[str, Any]
    """This message's own parse: JobSpec fields it states, before merging."""
    mentioned: list[str]
    """JobSpec fields the message stated."""
    parser: str
    fallback_reason: str | None
    intent: str
    """job_request, follow_up, faq, out_of_scope, injection or ask_back."""
    spec: dict[str, Any] | None
    """The thread's current job (JobSpec dump); persists across turns."""
    missing: list[str]
    awaiting_fields: list[str]
    """Fields the advisor asked for; the next job-like message completes that job (persists across turns)."""
    awaiting_new: bool
    """An ask-back about someone else's job is waiting: a model named next starts that job (the thread's own kept in
    its history)."""
    estimate: dict[str, Any] | None
    """VRAM estimate for the recommended layout (with its fit on that GPU)."""
    single_gpu_estimate: dict[str, Any] | None
    """Estimate on one GPU, fitted against the largest single card offered (what does not fit and the fix)."""
    topology: dict[str, Any] | None
    ranking: dict[str, Any] | None
    citations: list[dict[str, Any]]
    assumption_lines: list[str]
    answer: str
    notes: list[str]
    request: str
    """What the turn asks of the job: plain, prefer_speed, prefer_cost, feasibility, compare_count, spot_delta,
    off_topic (agent.parsing.intent.turn_request)."""
    answer_kind: str | None
    """recommendation, yes_no, delta, compare, declined, faq or ask_back."""
    changed: list[str]
    """JobSpec fields this follow-up changed ('prefer' when it changed the offer preference)."""
    verdict: dict[str, Any] | None
    """The structured verdict of the turn (agent.writing.verdict_card)."""
    feasibility: dict[str, Any] | None
    """The fit on the user's hardware for a yes/no question."""
    comparison: dict[str, Any] | None
    """The best offer with the GPU count a 'would N GPUs be better?' question asks about."""
    compare_gpus: int | None
    preference: str | None
    """'speed' or 'cost' from the conversation ("faster?"); persists across turns until a new job."""
    preference_changed: bool
    preference_before: str | None
    """The preference at the start of the turn (kept with a plan this turn replaces, for undo)."""
    last_top: dict[str, Any] | None
    """The previous recommendation's rental (persists), so a follow-up can say what it was before."""
    listed: list[dict[str, Any]]
    """The rentals the last job answer ranked first (persists): what "the second option" or "the one in Europe you
    listed" refers to (agent.graph.listed)."""
    act_listed: dict[str, Any] | None
    """This turn's reference to a listed rental (agent.graph.listed.Reference), for its answer."""
    hardware_subject: dict[str, Any]
    """The job's hardware a fit question asked about and its answer did not rent, {"fields", "no"} (persists): later
    turns rank the plan without it, as that answer's rental was (agent.graph.acts.subject.hardware_subject)."""
    last_kind: str | None
    """The previous job answer's kind (persists): a follow-up to a yes/no question is answered yes/no again."""
    parsed_unknown_model: str | None
    """This message's model name the registry does not know (agent.parsing.parse.ParseResult.unknown_model)."""
    clarify: str | None
    """The LLM parser's question about a provider or GPU it does not know (asked back instead of the job)."""
    unknown_model: str | None
    """The current job's unknown model name (persists with the job): the answer says a generic decoder was used."""
    act: str | None
    """This turn's dialogue act (agent.graph.acts): new_job, change, undo, question, what_if, inverse, faq, declined or
    ask_back."""
    act_topic: str | None
    """What a question or inverse turn asks about (compare, why_not, count, region, currency, memory, ...)."""
    act_clears: list[str]
    act_currency: str | None
    act_gpus: list[str]
    act_count: int | None
    act_target: dict[str, Any] | None
    """The settings an undo names ("back to the QLoRA plan"): it returns to the latest plan that had them."""
    act_drops: list[str]
    """Hardware fields this turn names as the user's own card elsewhere ("a 3090 at home"): not applied."""
    history: list[dict[str, Any]]
    """Earlier plans of the thread ({spec, top}), newest last (persists): undo returns to them."""
    pending: dict[str, Any] | None
    """The last what-if's job fields (persists): "ok, do that" adopts them."""
    focus: dict[str, Any] | None
    """Half of a setting the last turn left open (persists one turn, agent.parsing.focus): {"field", "mode",
    "topic"} when it named a number field without its value (the next lone number is that field's, a change or a
    what-if as `mode` says), {"value"} when it said a number alone (a field named next takes it)."""
    display_currency: str | None
    """The last currency the user asked totals in (persists)."""
    restored: bool
    undo_missing: bool
    adopt_missing: bool
    replaced_top: dict[str, Any] | None
    default_method: str | None
    model_guess: str | None
    """The model name as the user wrote it when the parser matched it fuzzily ("Mistrall 7B"): the answer asks."""
