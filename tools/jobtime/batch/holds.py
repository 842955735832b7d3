"""Whether a candidate's memory holds the job, from per-GPU memory alone: what the scale-out search asks of each node
count it tries (tools.ranking.plans.prefill_scale_out), without timing the layouts it does not keep (issue 27).

The layout search finds a layout that fits (`best`) when some layout it tries fits at some micro-batch it tries: every
data-parallel layout at the stated micro-batch and, where that does not fit, at each smaller one down to 1; where none
does, tensor parallelism inside an NVLink node the same way. A shape whose search finds none but whose tensor
parallelism would fit with NVLink gets the verdict `needs_nvlink_node`, which also holds the job in memory. Both only
compare per-GPU memory (cached per workload) with the usable memory, so this answers `holds` without step compute or
communication. Only shapes whose micro-step is known at every setting the search could try are answered (others are
None, for the full search); tests/test_batch_holds.py checks the answer against the full search's verdicts.
"""

from __future__ import annotations

from collections.abc import Sequence

from tools.jobtime.candidate import Candidate
from tools.jobtime.layouts import compute, data_parallel_plans, layout_slot, tensor_parallel_plans, tp_degrees
from tools.jobtime.topology import DEFAULT_MEMORY_MARGIN, Hardware
from tools.jobtime.verdicts import nvlink_only_gib
from tools.jobtime.workload import Workload


def holds_many(
    workload: Workload, found: Sequence[tuple[Candidate, Hardware]], *, margin: float = DEFAULT_MEMORY_MARGIN
) -> list[bool | None]:
    """Per candidate: whether topology.assess would hold the job in memory on it (a layout fits, or the verdict is
    needs_nvlink_node); None where its GPU's micro-step is unknown at some setting the search could try."""
    micros = (workload.micro_batch_size, *workload.smaller_micro_batches)
    variants = workload.checkpointing_variants
    timed: dict[tuple[int, int, bool], bool] = {}
    fits: dict[tuple[str, int, int, int, float], bool] = {}

    def known(hardware: Hardware) -> bool:
        """Whether the GPU's micro-step is known at every degree, checkpointing and micro-batch the search tries
        (tensor-parallel degrees only inside an NVLink node, where the search tries them)."""
        nvlink = hardware.links.kind == "nvlink"
        key = (id(hardware.gpu), hardware.per_node, nvlink)
        if key not in timed:
            degrees = (1, *tp_degrees(workload, hardware.per_node)) if nvlink else (1,)
            timed[key] = hardware.gpu is not None and all(
                compute(workload, hardware.gpu, tp, ckpt, micro) is not None
                for tp in degrees
                for ckpt in variants
                for micro in micros
            )
        return timed[key]

    def any_fits(kind: str, hardware: Hardware, usable: float) -> bool:
        """Whether a layout of `kind` (data or tensor parallel) fits at some setting and micro-batch it is tried at."""
        total, per_node, nodes = hardware.total, hardware.per_node, hardware.nodes
        key = (kind, total, per_node, nodes, usable)
        if key not in fits:
            plans = (
                data_parallel_plans(total, per_node, nodes)
                if kind == "data"
                else tensor_parallel_plans(workload, per_node, nodes, "nvlink")
            )
            fits[key] = any(
                (slot := layout_slot(workload, plan, total, nodes, ckpt, micro)) is not None and slot[0] <= usable
                for plan in plans
                for ckpt in variants
                for micro in micros
            )
        return fits[key]

    answers: list[bool | None] = []
    for _candidate, hardware in found:
        if not known(hardware):
            answers.append(None)
            continue
        usable = hardware.vram * (1.0 - margin)
        links = hardware.links
        held = any_fits("data", hardware, usable)
        if not held and links.kind == "nvlink":
            held = any_fits("tensor", hardware, usable)
        if not held:
            held = bool(nvlink_only_gib(hardware.total, hardware.nodes, links, usable, hardware.per_node, workload))
        answers.append(held)
    return answers
