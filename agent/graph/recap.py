"""Questions about the job itself rather than its plan: where the conversation stands ("summarize the current job",
"riassumimi il lavoro", "rangkum job aku") and what a setting is ("what budget did I give you?", "quante epoche hai
ipotizzato?", "budget yang saya kasih berapa?"): each setting as the thread's job holds it, or said as not given,
then the plan. Read from the job, never from the conversation's text."""

from __future__ import annotations

from typing import Any

from agent.graph.acts.texts import act_templates, change_words, rental
from agent.parsing import field_patterns
from agent.parsing import fields_named as parsing_fields_named
from agent.writing import templates
from tools.models import lookup

SUMMARY_FIELDS = (
    "model",
    "params_b",
    "method",
    "dataset_examples",
    "dataset_tokens",
    "epochs",
    "seq_len",
    "micro_batch_size",
    "precision",
    "optimizer",
    "gradient_checkpointing",
    "num_gpus",
    "max_gpus",
    "max_nodes",
    "gpu",
    "gpu_memory_gb",
    "budget",
    "deadline_hours",
    "interruptible_ok",
    "providers",
    "regions",
)
"""The job's settings in the order a summary says them."""


def fields_named(text: str) -> list[str]:
    """The job settings a message names by their word (agent.parsing.fields_named), in the summary's order."""
    found = set(parsing_fields_named(text))
    return [name for name in SUMMARY_FIELDS if name in found]


def _shown(spec: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """The named settings the job holds, a model by the name people know it by."""
    given = {name: spec[name] for name in names if spec.get(name) is not None}
    if given.get("model"):
        arch = lookup(given["model"])
        given["model"] = arch.name if arch else given["model"]
    return given


def summary(state: dict[str, Any], plan: dict[str, Any]) -> list[str]:
    """The job as it stands, setting by setting, and its plan."""
    language, spec = state["language"], state["spec"]
    t = act_templates(language)
    return [
        t["summary_job"].format(fields=change_words(_shown(spec, list(SUMMARY_FIELDS)), language)),
        t["question_plain"].format(rental=rental(plan, spec, language)),
    ]


def recall(state: dict[str, Any], plan: dict[str, Any]) -> list[str]:
    """The settings a question names as the job holds them (or as not given); the whole job when it names none."""
    language, spec = state["language"], state["spec"]
    t = act_templates(language)
    named = fields_named(state.get("message") or "")
    if not named:
        return summary(state, plan)
    given = _shown(spec, named)
    labels = templates(language)["field_labels"]
    lines = [t["recall_given"].format(fields=change_words(given, language))] if given else []
    for name in (name for name in named if name not in given):
        assumed = _assumed(state, plan, name)
        key = "recall_assumed" if assumed else "recall_unset"
        lines.append(t[key].format(field=labels.get(name, name), assumed=assumed))
    return lines


def _assumed(state: dict[str, Any], plan: dict[str, Any], name: str) -> str | None:
    """What the plan assumes for a setting the job leaves open ("3 epochs", "sequences of 2,048 tokens"): the
    answer's assumptions that name it, in the user's language; None where none does."""
    from agent.writing import assumption_lines
    from contract.jobspec import JobSpec
    from tools.memory import request_for_spec

    language, spec = state["language"], state["spec"]
    request, _ = request_for_spec(JobSpec.model_validate(spec))
    items = assumption_lines(spec, request.model_dump(), state.get("ranking") or {}, language, plan)
    words = field_patterns().get(name)
    found = [item for item in items if words is not None and words.search(item)]
    return "; ".join(found) or None
