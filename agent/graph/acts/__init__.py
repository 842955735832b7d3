"""Dialogue acts: every chat turn is exactly one act over the thread's plan, and each act has one meaning for the job.

new_job replaces the job; change edits named fields; undo restores an earlier plan; question asks about the plan
(answered from tools, job untouched); what_if answers a hypothetical against the plan (job untouched; "ok, do that"
adopts it); inverse asks for a limit (largest model, longest sequence, smallest GPU); faq, declined and ask_back are
as before. `classify.read_act` decides the act from the text, the parsed fields and the thread; `questions`,
`what_if` and `inverse` compute and word those acts' answers (wired into the graph by `nodes`); `history` keeps the
plans undo returns to.
"""

from agent.graph.acts.alternatives import compare
from agent.graph.acts.classify import ACTS, Act, ActReading, read_act
from agent.graph.acts.nodes import (
    PLAN_ACTS,
    act_update,
    history_after,
    merged_spec,
    method_line,
    preface,
    states_job,
    write_act,
)
from agent.graph.acts.subject import compares_hardware, hardware_subject, shown_first, unbound
from agent.graph.acts.texts import focus_question

__all__ = [
    "ACTS",
    "PLAN_ACTS",
    "Act",
    "ActReading",
    "act_update",
    "compare",
    "compares_hardware",
    "focus_question",
    "hardware_subject",
    "history_after",
    "merged_spec",
    "method_line",
    "preface",
    "read_act",
    "shown_first",
    "states_job",
    "unbound",
    "write_act",
]
