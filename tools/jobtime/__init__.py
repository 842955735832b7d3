"""Time and cost of one training job on one offer: tokens from the spec, FLOPs, achievable throughput, communication,
billing rounding and minimums. Every default and assumption is returned with the result.
"""

from tools.jobtime.batch import assess_many, holds_many
from tools.jobtime.candidate import Candidate, TopologyResult
from tools.jobtime.estimate_block import EstimateWithThroughput, ThroughputBlock, throughput_block
from tools.jobtime.layouts import layout_memory
from tools.jobtime.overheads import Overheads, checkpoint_bytes, job_overheads, overhead_assumptions
from tools.jobtime.timing import (
    ASSUMED_BILLING,
    CHINCHILLA_TOKENS_PER_PARAM,
    DEFAULT_EXAMPLE_TOKENS,
    DEFAULT_EXAMPLES,
    DEFAULT_FINETUNE_EPOCHS,
    TEXT_BYTES_PER_TOKEN,
    JobTime,
    Tokens,
    billed_hours,
    billing_for,
    job_time,
    job_times,
    job_tokens,
    run_cost,
    tokens_in_text,
)
from tools.jobtime.topology import (
    DEFAULT_MEMORY_MARGIN,
    Assessment,
    Hardware,
    assess,
    check_topology,
    hardware_of,
)
from tools.jobtime.workload import Workload, build_workload, shape_workload

__all__ = [
    "ASSUMED_BILLING",
    "CHINCHILLA_TOKENS_PER_PARAM",
    "DEFAULT_EXAMPLES",
    "DEFAULT_EXAMPLE_TOKENS",
    "DEFAULT_FINETUNE_EPOCHS",
    "DEFAULT_MEMORY_MARGIN",
    "TEXT_BYTES_PER_TOKEN",
    "Assessment",
    "Candidate",
    "EstimateWithThroughput",
    "Hardware",
    "JobTime",
    "Overheads",
    "ThroughputBlock",
    "Tokens",
    "TopologyResult",
    "Workload",
    "assess",
    "assess_many",
    "billed_hours",
    "billing_for",
    "build_workload",
    "check_topology",
    "checkpoint_bytes",
    "hardware_of",
    "holds_many",
    "job_overheads",
    "job_time",
    "job_times",
    "job_tokens",
    "layout_memory",
    "overhead_assumptions",
    "run_cost",
    "shape_workload",
    "throughput_block",
    "tokens_in_text",
]
