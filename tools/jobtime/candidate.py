"""The topology checker's boundary: a set of GPUs to check (Candidate) and what the check says about it
(TopologyResult), as pydantic models (tools.jobtime.topology checks one; its `_explained` builds the result)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tools.jobtime.collectives import Layout
from tools.jobtime.layouts import LayoutOption
from tools.jobtime.verdicts import VerdictCode

Interconnect = Literal["nvlink", "pcie", "unknown"]


class Candidate(BaseModel):
    """A set of GPUs to run on: which GPU, how many, how they are linked inside and between nodes."""

    model_config = ConfigDict(extra="forbid")

    gpu: str = Field(description="GPU name in any spelling, e.g. 'H100', 'A100-80GB'.")
    form_factor: str | None = Field(
        default=None, max_length=16, description="SXM, PCIe or NVL; the GPU's usual one when omitted."
    )
    gpu_count: int = Field(ge=1, le=100_000, description="GPUs in total.")
    gpus_per_node: int | None = Field(default=None, ge=1, le=1024, description="GPUs per node; all in one if omitted.")
    interconnect: Interconnect = Field(
        default="unknown", description="GPU-to-GPU link inside a node: nvlink, pcie or unknown (the GPU's usual link)."
    )
    nvlink_gbs: float | None = Field(default=None, ge=0.001, description="Per-GPU unidirectional NVLink GB/s override.")
    inter_node_gbps: float | None = Field(default=None, ge=0.001, description="Inter-node bandwidth per node, Gbit/s.")
    inter_node_fabric: str | None = Field(
        default=None, max_length=120, description="Name of the inter-node fabric (e.g. 'EFA', 'InfiniBand')."
    )
    vram_gib: float | None = Field(default=None, gt=0, description="Memory per GPU override (e.g. from the offer).")


class TopologyResult(BaseModel):
    """Whether and how a job runs on a candidate, as a verdict code with parameters plus the numbers behind it."""

    verdict: VerdictCode
    runnable: bool
    params: dict[str, float | int | str | bool | None] = Field(
        description="Numbers a sentence for the verdict needs (language-independent)."
    )
    summary: str = Field(description="English one-liner; the agent writes its own per language from code + params.")
    gpu: str
    gpu_count: int
    gpus_per_node: int
    nodes: int
    link: str = Field(description="'nvlink', 'nvlink-bridge' or 'pcie' inside a node.")
    link_busbw_gbs: float
    inter_node_busbw_gbs: float | None
    vram_gib: float
    usable_vram_gib: float
    memory_margin: float
    fits_on_one_gpu: bool
    layout: Layout | None
    sharding: str | None
    tensor_parallel: int | None
    per_gpu_gib: float | None
    compute_s_per_step: float | None
    comm_s_per_step: float | None
    exposed_comm_s_per_step: float | None
    comm_share: float | None
    exposed_comm_share: float | None
    gradient_checkpointing: bool | None = None
    gradient_accumulation_steps: int | None = None
    micro_batch_size: int | None = Field(
        default=None,
        description="Sequences per GPU per micro-step in the chosen "
        "layout (smaller than asked when only that fits; same global batch).",
    )
    slowdown: float | None = Field(description="Step time / compute time (1.0 = communication fully hidden).")
    utilisation: float | None
    utilisation_source: str | None
    options: list[LayoutOption]
    assumptions: list[str]
