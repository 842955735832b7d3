"""Time and cost of one training job on one offer: tokens from the spec, FLOPs, achievable throughput, communication,
billing rounding and minimums. Every default and assumption is returned with the result."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from contract.jobspec import JobSpec
from tools.jobtime.candidate import TopologyResult
from tools.jobtime.topology import Assessment
from tools.jobtime.workload import Workload
from tools.providers import get_provider
from tools.spot import Billing, billed_seconds

CHINCHILLA_TOKENS_PER_PARAM = 20
"""Compute-optimal pre-training data (Hoffmann et al. 2022, 'Training Compute-Optimal LLMs')."""
DEFAULT_EXAMPLES = 52_002
"""Stanford Alpaca's instruction set size (Taori et al. 2023), the default fine-tuning dataset when none is given."""
DEFAULT_EXAMPLE_TOKENS = 512
"""Average tokens per example when only an example count is known (Alpaca's training max length, 512)."""
TEXT_BYTES_PER_TOKEN = 4.0
"""Bytes of plain text per token when a data set is sized in bytes ("2 GB of text"): the usual rule of thumb for BPE
tokenizers on Latin-script text (about four characters per token), said as an assumption where it is used."""


def tokens_in_text(size_bytes: float) -> int:
    """Tokens in `size_bytes` of plain text (TEXT_BYTES_PER_TOKEN bytes each), at least one."""
    return max(1, round(size_bytes / TEXT_BYTES_PER_TOKEN))


DEFAULT_FINETUNE_EPOCHS = 3
"""Alpaca's recipe trains 3 epochs; used only when no dataset size is given either."""
ASSUMED_BILLING = Billing(granularity_s=60.0, minimum_s=60.0)
"""Used when the provider's billing rule is unknown: per minute, 1 minute minimum (assumption)."""


TIME_ASSUMPTIONS = (
    "FLOPs per token: 6N + 12·L·H·T full, 4N + 12·L·H·T with a frozen base, +2N + 4·L·H·T with "
    "recompute (PaLM appendix B); speed per micro-step calibrated on published runs "
    "(tools/jobtime/micro_step.py, evals/throughput)",
    "excludes setup time: instance start, downloads, evaluation and final save",
)
"""What every job time assumes, besides how its token count was reached."""


@dataclass(frozen=True, kw_only=True)
class Tokens:
    """Tokens the job trains on (all epochs), and how that number was reached."""

    total: float
    assumptions: tuple[str, ...]


def job_tokens(
    spec: JobSpec, *, seq_len: int, total_params: int, example_tokens: int = DEFAULT_EXAMPLE_TOKENS
) -> Tokens:
    """Training tokens: dataset tokens × epochs, else examples × average length × epochs, else a stated default."""
    notes: list[str] = []
    epochs = spec.epochs
    if spec.dataset_tokens is not None:
        if epochs is None:
            epochs = 1.0
            notes.append("epochs not given: 1 assumed")
        return Tokens(total=spec.dataset_tokens * epochs, assumptions=tuple(notes))
    if spec.dataset_examples is not None:
        if epochs is None:
            epochs = 1.0
            notes.append("epochs not given: 1 assumed")
        length = min(example_tokens, seq_len)
        notes.append(f"{length} tokens per example on average assumed (give dataset_tokens for an exact figure)")
        return Tokens(total=spec.dataset_examples * length * epochs, assumptions=tuple(notes))
    if spec.method == "pretrain":
        tokens = CHINCHILLA_TOKENS_PER_PARAM * total_params * (epochs or 1.0)
        notes.append(
            f"dataset size not given: {CHINCHILLA_TOKENS_PER_PARAM} tokens per parameter assumed "
            "(compute-optimal, Hoffmann et al. 2022)"
        )
        return Tokens(total=tokens, assumptions=tuple(notes))
    epochs = epochs or DEFAULT_FINETUNE_EPOCHS
    length = min(DEFAULT_EXAMPLE_TOKENS, seq_len)
    notes.append(
        f"dataset size not given: an Alpaca-sized set assumed ({DEFAULT_EXAMPLES} examples × {length} "
        f"tokens × {epochs:g} epochs; Taori et al. 2023)"
    )
    return Tokens(total=DEFAULT_EXAMPLES * length * epochs, assumptions=tuple(notes))


@lru_cache(maxsize=256)
def billing_for(provider: str) -> tuple[Billing, str]:
    """The provider's billing rule (granularity, minimum) and where it comes from."""
    info = get_provider(provider)
    if info is None or info.billing_granularity_s is None:
        return ASSUMED_BILLING, (f"billing rule of {provider} unknown: per minute with a 1-minute minimum assumed")
    billing = Billing(granularity_s=float(info.billing_granularity_s), minimum_s=float(info.billing_minimum_s or 0))
    source = info.source_of("billing_granularity_s") or "tools/providers/data"
    return billing, f"{provider} bills per {billing.granularity_s:g} s, minimum {billing.minimum_s:g} s ({source})"


class JobTime(NamedTuple):
    """How long a job takes on a candidate and what drives it (internal: the ranking times every shape of every job,
    so this is a named tuple, cheap to build; RankedOffer carries what users see)."""

    tokens: float
    flops_per_token: float
    total_pflop: float
    """Training compute in PFLOP (1e15), recompute included."""
    micro_steps: float
    step_seconds: float
    compute_seconds_per_step: float
    exposed_comm_seconds_per_step: float
    tokens_per_second: float
    hours: float
    assumptions: tuple[str, ...]


class _Shared(NamedTuple):
    """What every shape's time of one job reads: tokens, FLOPs per token, PFLOP, stated micro-batch, sequence length
    and the assumptions."""

    total: float
    flops: float
    pflop: float
    stated: int
    seq: int
    notes: tuple[str, ...]


def _shared(workload: Workload, tokens: Tokens) -> _Shared:
    """The job's figures every shape's time reads."""
    flops = workload.token_flops.total
    return _Shared(
        tokens.total,
        flops,
        tokens.total * flops / 1e15,
        workload.micro_batch_size,
        workload.seq_len,
        (*tokens.assumptions, *TIME_ASSUMPTIONS),
    )


def _timed(
    shared: _Shared, gpu_count: int, tp: int | None, micro: int | None, compute: float, exposed: float | None
) -> JobTime:
    """The job's time on a layout: tokens per micro-step from its replicas and micro-batch, then steps and hours."""
    replicas = gpu_count // (tp or 1)
    tokens_per_step = replicas * (micro or shared.stated) * shared.seq
    steps = shared.total / tokens_per_step
    exposed = exposed or 0.0
    step = compute + exposed
    return JobTime._make(
        (
            shared.total,
            shared.flops,
            shared.pflop,
            steps,
            step,
            compute,
            exposed,
            tokens_per_step / step,
            steps * step / 3600.0,
            shared.notes,
        )
    )


def job_time(workload: Workload, topology: Assessment | TopologyResult, tokens: Tokens) -> JobTime | None:
    """Wall-clock hours of the job on the candidate, or None when it cannot run or the GPU's speed is unknown."""
    compute = topology.compute_s_per_step
    if not topology.runnable or compute is None:
        return None
    return _timed(
        _shared(workload, tokens),
        topology.gpu_count,
        topology.tensor_parallel,
        topology.micro_batch_size,
        compute,
        topology.exposed_comm_s_per_step,
    )


def job_times(workload: Workload, topologies: list[Assessment | None], tokens: Tokens) -> list[JobTime | None]:
    """job_time of each topology (None for None), the figures every one shares read once (a ranking times ~280
    shapes of a new job), each time read from the chosen layout directly."""
    shared = _shared(workload, tokens)
    times: list[JobTime | None] = []
    for topology in topologies:
        best = topology.best if topology is not None else None
        if topology is None or best is None or best.compute_s is None:
            times.append(None)
            continue
        times.append(
            _timed(
                shared,
                topology.gpu_count,
                best.tensor_parallel,
                best.micro_batch_size,
                best.compute_s,
                best.exposed_comm_s,
            )
        )
    return times


@dataclass(frozen=True, kw_only=True)
class Cost:
    """Money for one run on one offer at one price."""

    billed_hours: float
    cost_usd: float


def billed_hours(hours: float, billing: Billing) -> float:
    """Hours charged for one instance running `hours`, rounded by the provider's billing rule."""
    if hours < 0:
        raise ValueError("hours and prices must not be negative")
    return billed_seconds(hours * 3600.0, billing) / 3600.0


def run_cost(hours: float, price_per_hour: float, billing: Billing, *, instances: int = 1) -> Cost:
    """Cost of running `instances` identical instances for `hours`, each rounded by the provider's billing rule."""
    if hours < 0 or price_per_hour < 0:
        raise ValueError("hours and prices must not be negative")
    billed = billed_hours(hours, billing)
    return Cost(billed_hours=billed, cost_usd=billed * price_per_hour * instances)
