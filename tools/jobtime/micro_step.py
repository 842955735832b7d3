"""Compute seconds of one training micro-step on one GPU, from what drives them, calibrated on published runs.

A micro-step's compute is three kinds of work, each at its own speed (evals/throughput holds the runs, the split
and the fit):
- dense matmuls (6N per token full, 4N frozen base, +2N recompute) at the GPU's matmul ceiling, lowered for narrow
  layers (hidden size) and small micro-steps (tokens per GEMM): e = ceiling · h/(h + H0) · t/(t + T0);
- attention (12·L·H·T, +4·L·H·T recompute; the full, non-causal count) at a fixed share of the ceiling;
- memory-bound work at the GPU's memory bandwidth: per token, norms, activations, residuals and their gradients
  (bytes ∝ layers × hidden, more with recompute), the fp32 logits and loss (∝ vocabulary), LoRA's unfused adapter
  passes (∝ the adapted layers' input + output widths), and per micro-step QLoRA's dequantisation of every 4-bit
  weight for each matmul pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, TypeVar

from tools.gpus import GpuSpec
from tools.jobtime.throughput import MAMF_FRACTION, QLORA_DEQUANT_BYTES_PER_PARAM, TokenFlops, Utilisation, peak_tflops

if TYPE_CHECKING:  # numpy only where many GPUs are computed at once (tools.jobtime.batch)
    import numpy as np
    import numpy.typing as npt

Figure = TypeVar("Figure", float, "npt.NDArray[np.float64]")
"""One GPU's figure, or an array of many GPUs' (step_figures runs on either)."""


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """The fitted constants (evals/throughput/fit.py fits them on the tuned sources only)."""

    ceiling: dict[str, float]
    """Matmul ceiling, fraction of dense peak, per GPU (fitted where tuned rows exist)."""
    hidden_half: float
    """Hidden size at which matmul efficiency is half the ceiling."""
    tokens_half: float
    """Tokens per micro-step (per GPU) at which matmul efficiency is half the ceiling."""
    attention_share: float
    """Attention speed as a share of the matmul ceiling (full, non-causal FLOP count)."""
    layer_bytes: float
    """Memory-bound bytes per token per layer, in units of hidden × 2 bytes (forward + backward)."""
    vocab_bytes: float
    """Memory-bound bytes per token for logits and loss, in units of the vocabulary size."""
    lora_bytes: float
    """Memory-bound bytes per token for unfused LoRA passes, in units of the adapted widths × 2 bytes."""
    dequant_passes: float
    """Multiplier on QLoRA's dequantisation traffic (kernel efficiency and extra passes)."""
    source: str


CALIBRATION = Calibration(
    ceiling={"H100": 0.562, "H200": 0.562, "A100-80GB": 0.824, "A100-40GB": 0.824, "A800": 0.824},
    hidden_half=448.6,
    tokens_half=601.8,
    attention_share=0.618,
    layer_bytes=12.61,
    vocab_bytes=38.28,
    lora_bytes=1.0,
    dequant_passes=0.5,
    source=(
        "fitted on 39 tuned published runs (llm-foundry MPT, torchtune Llama; evals/throughput, "
        "python -m evals.throughput.fit)"
    ),
)
DEFAULT_CEILING_SHARE = 0.85
"""GPUs with no tuned row: the mean fitted ceiling × this (stated assumption: no published run to check it)."""


@dataclass(frozen=True, kw_only=True)
class StepShape:
    """What one micro-step on one GPU computes (after tensor-parallel splitting)."""

    tokens: int
    hidden: int
    layers: int
    vocab: int
    tensor_parallel: int
    method: str
    checkpointing: bool
    flops: TokenFlops
    adapter_width: float = 0.0
    """Σ (input + output width) over adapted linears, all layers (LoRA parameters / rank)."""
    quantized_params: int = 0


@dataclass(frozen=True, kw_only=True)
class StepCompute:
    """Compute seconds of one micro-step, its parts, and the utilisation they imply (its explanation written on
    first use: the layout search computes thousands of steps for a new job and explains a few)."""

    seconds: float
    matmul_s: float
    attention_s: float
    memory_s: float
    achieved: float
    """Share of dense peak reached."""
    ceiling: float
    ceiling_source: str
    bandwidth_tbs: float
    calibration: Calibration

    @property
    def utilisation_value(self) -> float:
        """The share of dense peak rounded to 4 places (utilisation.value)."""
        return round(self.achieved, 4)

    @cached_property
    def utilisation(self) -> Utilisation:
        """The utilisation and where it comes from."""
        cal = self.calibration
        source = (
            f"{self.achieved:.0%} of dense peak: matmul ceiling {self.ceiling:.0%} ({self.ceiling_source}), narrower "
            f"than hidden {cal.hidden_half:g} and fewer than {cal.tokens_half:g} tokens per step slow matmuls, "
            f"attention at {cal.attention_share:.0%} of the ceiling, memory-bound work at "
            f"{self.bandwidth_tbs:g} TB/s; {cal.source}"
        )
        return Utilisation(value=self.utilisation_value, source=source)


def ceiling_for(gpu: GpuSpec, calibration: Calibration | None = None) -> tuple[float, str]:
    """The GPU's matmul ceiling and where it comes from (fitted, scaled by measured matmul speed, or assumed)."""
    cal = calibration or CALIBRATION
    if gpu.name in cal.ceiling:
        return cal.ceiling[gpu.name], f"{gpu.name} fitted on published runs"
    hopper = cal.ceiling.get("H100")
    if gpu.name in MAMF_FRACTION and hopper:
        value = hopper * MAMF_FRACTION[gpu.name] / MAMF_FRACTION["H100"]
        return value, (
            f"H100's fitted ceiling scaled by measured max-achievable matmul ({MAMF_FRACTION[gpu.name]:.1%}"
            " of peak vs H100 80.3 %, hardware.md §1)"
        )
    mean = sum(cal.ceiling.values()) / len(cal.ceiling)
    return mean * DEFAULT_CEILING_SHARE, (
        f"assumption: no published training run for {gpu.name}; "
        f"{DEFAULT_CEILING_SHARE:.0%} of the fitted A100/H100 ceiling"
    )


def step_compute(
    shape: StepShape, gpu: GpuSpec, precision: str, calibration: Calibration | None = None
) -> StepCompute | None:
    """Compute seconds of one micro-step on `gpu`; None when the GPU's tensor speed for `precision` is unknown."""
    cal = calibration or CALIBRATION
    peak = peak_tflops(gpu, precision)
    if not peak:
        return None
    ceiling, ceiling_source = ceiling_for(gpu, cal)
    bandwidth_tbs = gpu.memory_bandwidth_tbs or 1.0
    matmul_s, attention_s, memory_s, seconds, achieved = step_figures(shape, peak, ceiling, bandwidth_tbs, cal)
    return StepCompute(
        seconds=seconds,
        matmul_s=matmul_s,
        attention_s=attention_s,
        memory_s=memory_s,
        achieved=achieved,
        ceiling=ceiling,
        ceiling_source=ceiling_source,
        bandwidth_tbs=bandwidth_tbs,
        calibration=cal,
    )


def step_figures(
    shape: StepShape, peak: Figure, ceiling: Figure, bandwidth_tbs: Figure, cal: Calibration
) -> tuple[Figure, Figure, Figure, Figure, Figure]:
    """(matmul, attention, memory-bound and total seconds, achieved share of dense peak) of one micro-step from the
    GPU's dense peak TFLOPS, matmul ceiling and memory bandwidth (TB/s): floats for one GPU, or numpy arrays for many
    (tools.jobtime.batch: the same operations in the same order, element by element)."""
    flops_per_s = peak * 1e12
    tokens = shape.tokens / shape.tensor_parallel
    width = shape.hidden / shape.tensor_parallel
    matmul_eff = ceiling * width / (width + cal.hidden_half) * shape.tokens / (shape.tokens + cal.tokens_half)
    dense = shape.flops.dense + shape.flops.adapters + shape.flops.recompute * _dense_share(shape)
    attention = shape.flops.attention + shape.flops.recompute * (1.0 - _dense_share(shape))
    matmul_s = tokens * dense / (flops_per_s * matmul_eff)
    attention_s = tokens * attention / (flops_per_s * ceiling * cal.attention_share)
    recompute = 1.5 if shape.checkpointing else 1.0
    per_token = (
        cal.layer_bytes * shape.layers * shape.hidden * 2.0 * recompute
        + cal.vocab_bytes * shape.vocab
        + cal.lora_bytes * shape.adapter_width * 2.0
    )
    bandwidth = bandwidth_tbs * 1e12
    memory_s = tokens * per_token / bandwidth
    if shape.method == "qlora":
        passes = 3 if shape.checkpointing else 2
        memory_s = memory_s + (
            cal.dequant_passes
            * passes
            * shape.quantized_params
            / shape.tensor_parallel
            * QLORA_DEQUANT_BYTES_PER_PARAM
            / bandwidth
        )
    seconds = matmul_s + attention_s + memory_s
    achieved = tokens * shape.flops.total / seconds / flops_per_s
    return matmul_s, attention_s, memory_s, seconds, achieved


def _dense_share(shape: StepShape) -> float:
    """Share of the recompute FLOPs that are dense matmuls (the rest is attention)."""
    attention_forward = shape.flops.attention / 3.0
    recompute = shape.flops.recompute
    return 1.0 - attention_forward / recompute if recompute > 0 else 1.0
