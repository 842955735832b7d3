"""Chat message -> JobSpec: language, offline parse, optional LLM parse, and merging a follow-up into the current job."""

from agent.parsing.corrections import against_the_job
from agent.parsing.focus import (
    field_patterns,
    fields_named,
    focused,
    lone_number,
    named_field,
    number_said_alone,
    says_number,
    scaled,
)
from agent.parsing.intent import (
    HARDWARE_FIELDS,
    JOB_DEFINING,
    asks_both_ends,
    asks_to_act_for_user,
    classify_intent,
    preference_of,
    turn_request,
)
from agent.parsing.offline import parse_fields
from agent.parsing.parse import merge_spec, parse_message
from agent.parsing.rules.preferences import methods_named

__all__ = [
    "HARDWARE_FIELDS",
    "JOB_DEFINING",
    "against_the_job",
    "asks_both_ends",
    "asks_to_act_for_user",
    "classify_intent",
    "field_patterns",
    "fields_named",
    "focused",
    "lone_number",
    "merge_spec",
    "methods_named",
    "named_field",
    "number_said_alone",
    "parse_fields",
    "parse_message",
    "preference_of",
    "says_number",
    "scaled",
    "turn_request",
]
