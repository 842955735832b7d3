"""VRAM estimator: per-GPU peak training memory with a breakdown, fit check, limits and ranked fixes.

Model: the peak is the larger of two phases, each a sum of live tensors (bytes):
  forward/backward = weights (+ autocast half copies) + optimizer state + transient buffers
                     + max(all activations + logits + head gradient, all gradients + one layer of activations)
  optimizer step   = weights + gradients + optimizer state + optimizer temporaries
Sharding follows the frameworks: DeepSpeed ZeRO-1/2/3 byte rules, FSDP FULL_SHARD units, Megatron-style TP/PP
shards. `allocated_gib` is what torch.cuda.max_memory_allocated would show; `per_gpu_gib` is what nvidia-smi would
show (plus CUDA context, NCCL buffers and the caching allocator's reserve). Sources: evals/calibration/SOURCES.md
and ../shared/reference/memory-formulas.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contract.jobspec import MAX_SEQ_LEN, JobSpec
from tools.memory.defaults import DEFAULTS, JobDefaults, OptimizerImpl, example_sequence
from tools.memory.fit_search import largest_fitting, ranked_fixes
from tools.memory.peak import (
    ALLOCATOR_RESERVE_FRACTION,
    FIT_MARGIN,
    NCCL_GIB,
    allocation,
    allocator_reserve,
    gib,
    overhead_bytes,
    peak_terms,
    per_gpu_bytes,
    qlora_recipe,
    resolved,
    with_changes,
)
from tools.memory.request import (
    GIB,
    Estimate,
    EstimateRequest,
    FitReport,
    Fix,
    Offload,
    Sharding,
)
from tools.memory.setup import Setup, build_setup, check_degrees, lora_params, resolve_arch
from tools.models import ModelArch

__all__ = [
    "DEFAULTS",
    "FIT_MARGIN",
    "GIB",
    "Estimate",
    "EstimateRequest",
    "FitReport",
    "Fix",
    "JobDefaults",
    "Offload",
    "OptimizerImpl",
    "Sharding",
    "estimate",
    "estimate_for_spec",
    "lora_params",
    "request_for_plan",
    "request_for_spec",
    "request_with_defaults",
    "resolve_arch",
]

ADAMW_NOTES = {
    "fused": "fused AdamW (HF Trainer default adamw_torch_fused: no temporary in the step)",
    "foreach": "torch AdamW foreach implementation (one state-sized temporary in the step)",
    "for_loop": "for-loop AdamW (two temporaries of the largest parameter in the step)",
    "deepspeed": "DeepSpeed FusedAdam (no temporary in the step)",
}


def precision_note(setup: Setup) -> str:
    """What the precision means for weights and activations."""
    if setup.method == "qlora":
        stream = "fp32" if setup.profile in ("fp32", "mixed") else "16-bit"
        return f"QLoRA: 4-bit base, {setup.precision} compute, {stream} residual stream"
    return (
        f"precision {setup.precision}: "
        + {
            "fp32": "fp32 weights and activations",
            "mixed": "fp32 weights and residual stream, 16-bit matmuls",
            "half": "16-bit weights and activations",
        }[setup.profile]
    )


def assumptions_for(setup: Setup, arch: ModelArch, unknown: str | None = None, *, auto_bf16: bool = False) -> list[str]:
    """The stated assumptions behind one estimate."""
    notes = [
        precision_note(setup),
        "FlashAttention/SDPA (no s^2 score matrices)" if setup.flash else "eager attention (s^2 scores kept)",
        {
            "fp32": "HF-style loss: logits upcast to fp32 for cross-entropy",
            "half": "loss on 16-bit logits",
            "fused": "fused linear cross-entropy (no full logits tensor)",
        }[setup.loss],
        f"CUDA context {setup.context_bytes / GIB:g} GiB; allocator reserve {int(ALLOCATOR_RESERVE_FRACTION * 100)} % of the "
        "peak plus one fp32-logits-sized segment" + (f"; NCCL {NCCL_GIB} GiB" if setup.gpus > 1 else ""),
    ]
    if setup.optimizer == "adamw":
        notes.append(ADAMW_NOTES["deepspeed" if setup.deepspeed else setup.optimizer_impl])
    if setup.adapters:
        notes.append(
            f"LoRA rank {setup.rank} on {', '.join(setup.lora_modules)}; adapters, their gradients and "
            "Adam states in fp32 (PEFT default)"
        )
    if setup.method == "qlora":
        notes.append(
            "NF4 base with double quantisation; embeddings, head and norms in "
            + (
                "fp32 (peft prepare_model_for_kbit_training)"
                if setup.profile == "mixed"
                else "16-bit (TRL casts them back to bf16"
                + (
                    "; the fp32 upcast would need more than LoRA here, so the estimate is kept at LoRA's "
                    "figure, on the safe side of this recipe)"
                    if auto_bf16
                    else ")"
                )
                if setup.profile == "half"
                else "fp32"
            )
        )
    if setup.checkpointing:
        notes.append("gradient checkpointing per decoder layer (layer inputs kept, one layer recomputed at a time)")
    if arch.approximate:
        named = f"unknown model '{(unknown or '').strip()}'" if (unknown or "").strip() else "model given by size only"
        notes.append(
            f"{named}: standard Llama-style decoder scaled to {arch.total_params / 1e9:.3g}B "
            f"parameters (about {arch.layers:.0f} layers, hidden {arch.hidden:.0f}); approximate, give its "
            "config.json for an exact estimate"
        )
    if setup.sharding in ("zero1", "zero2", "zero3"):
        notes.append(f"DeepSpeed {setup.sharding.upper()} byte rules over {setup.dp} data-parallel ranks")
    if setup.sharding == "fsdp":
        notes.append(f"FSDP FULL_SHARD over {setup.dp} ranks, decoder layers as units, backward prefetch")
    if setup.sharding == "ddp" and setup.gpus > 1:
        notes.append("DDP gradient buckets copy the gradients")
    return notes


def vram_for(request: EstimateRequest) -> tuple[str | None, float | None]:
    """The GPU name and usable GiB the fit is checked against, if any."""
    if request.vram_gib is not None:
        return request.gpu, request.vram_gib
    if request.gpu is None:
        return None, None
    from tools.gpus import lookup_gpu  # the GPU table lives with the catalog

    spec = lookup_gpu(request.gpu)
    if spec is None or spec.memory_gib is None:
        raise ValueError(f"unknown GPU '{request.gpu}'; give --vram-gib instead")
    return spec.name, float(spec.memory_gib)


def estimate(request: EstimateRequest) -> Estimate:
    """Estimate per-GPU peak memory for `request`, and check the fit when a GPU or VRAM size is given."""
    arch = resolve_arch(request)
    stated = build_setup(request, arch)
    setup = resolved(stated)
    terms, phase, host, trainable = peak_terms(setup)
    allocated = sum(terms.values())
    overhead = overhead_bytes(allocated, setup)
    auto_bf16 = request.qlora_upcast is None and setup.qlora_upcast is False
    if auto_bf16:  # the upcast would pass LoRA: the estimate is kept at LoRA's figure (see per_gpu_bytes)
        margin = max(0.0, per_gpu_bytes(stated) - (allocated + overhead))
        terms["activations"] += margin
        allocated += margin
    breakdown = {name: gib(value) for name, value in terms.items()} | {"overhead": gib(overhead)}
    result = Estimate(
        model_id=arch.id,
        model_name=arch.name,
        approximate=arch.approximate,
        unknown_model=(request.model or "").strip() if arch.approximate and (request.model or "").strip() else None,
        method=setup.method,  # type: ignore[arg-type]
        precision=setup.precision,
        allocated_gib=gib(allocated),
        reserved_gib=gib(allocated + allocator_reserve(allocated, setup)),
        per_gpu_gib=gib(allocated + overhead),  # type: ignore[arg-type]
        breakdown_gib=breakdown,
        peak_phase=phase,
        total_params=arch.total_params,
        trainable_params=trainable,
        active_params=arch.active_params,
        host_ram_gib=gib(host) if host else None,
        assumptions=assumptions_for(setup, arch, request.model, auto_bf16=auto_bf16),
    )
    gpu_name, vram = vram_for(request)
    if vram is not None:
        vram_bytes = vram * GIB * (1.0 - FIT_MARGIN)  # usable: the one fit threshold (FIT_MARGIN)
        per_gpu = allocated + overhead
        fits = per_gpu <= vram_bytes
        result.assumptions.append(
            f"fits means per-GPU estimate <= {1 - FIT_MARGIN:.0%} of the GPU's memory "
            f"({vram * (1 - FIT_MARGIN):.2f} of {vram:g} GiB; the rest kept free)"
        )
        result.fit = FitReport(
            gpu=gpu_name,
            vram_gib=vram,
            fits=fits,
            headroom_gib=round((vram_bytes - per_gpu) / GIB, 3),
            max_micro_batch_size=largest_fitting(stated, "batch", vram_bytes, 65_536),
            max_seq_len=largest_fitting(stated, "seq", vram_bytes, min(MAX_SEQ_LEN, 4 * 1024 * 1024)),
            fixes=[] if fits else ranked_fixes(stated, vram_bytes),
        )
    return result


def per_gpu_gib(request: EstimateRequest) -> float:
    """estimate(request).per_gpu_gib with the same arithmetic, without the breakdown, assumptions or fit (the
    topology search asks this for every layout)."""
    return setup_gib(build_setup(request, resolve_arch(request)))


def layout_gib(base: Setup, *, gpus: int, sharding: str, tp: int, checkpointing: bool, batch: int) -> float:
    """per_gpu_gib of the request behind `base` (its build_setup) with another layout: GPUs, sharding,
    tensor-parallel degree, checkpointing and micro-batch (ValueError where build_setup would refuse the degree)."""
    check_degrees(base.arch, tp, base.pp)
    return setup_gib(with_changes(base, gpus=gpus, sharding=sharding, tp=tp, checkpointing=checkpointing, batch=batch))


LayoutQuestion = tuple[str, int, bool, int, bool, int]
"""(sharding, tensor-parallel degree, checkpointing, micro-batch, several GPUs, data-parallel degree or 0)."""


def layout_question(*, pp: int, gpus: int, sharding: str, tp: int, checkpointing: bool, batch: int) -> LayoutQuestion:
    """What layout_gib's answer for one base setup (of pipeline degree `pp`) depends on: the layout's sharding,
    tensor-parallel degree, checkpointing and micro-batch, and of its GPU count only whether there are several and,
    where the sharding divides model states over the replicas, the data-parallel degree (the memory model reads
    nothing else of it): layouts that ask the same question share one answer."""
    dp = gpus // (tp * pp) if sharding not in ("none", "ddp") else 0
    return sharding, tp, checkpointing, batch, gpus > 1, dp


def setup_gib(stated: Setup) -> float:
    """Per-GPU GiB (nvidia-smi view) of a setup as build_setup states it (its QLoRA recipe still open)."""
    if stated.method != "qlora" or stated.qlora_upcast is not None:
        return gib(per_gpu_bytes(stated))
    setup, open_bytes = qlora_recipe(stated)
    if setup.qlora_upcast:
        return gib(per_gpu_bytes(setup))  # the same sum, memoised (deciding the QLoRA recipe computed it)
    allocated, overhead = allocation(setup)
    allocated += max(0.0, open_bytes - (allocated + overhead))
    return gib(allocated + overhead)


FILLED_NOTES = {
    "method": "method not given: full fine-tuning assumed",
    "seq_len": f"sequence length not given: {DEFAULTS.seq_len} tokens assumed",
    "micro_batch_size": f"micro-batch size not given: {DEFAULTS.micro_batch_size} sequence per GPU assumed",
    "gradient_checkpointing": "gradient checkpointing not given: on assumed (the usual fine-tuning recipe)",
}
"""How each headline default is stated when the user left it open (CLI and chat alike)."""


def request_with_defaults(fields: dict[str, object]) -> tuple[EstimateRequest, list[str]]:
    """An EstimateRequest from the fields a caller has (None = not given), with DEFAULTS filling the rest, and
    the sentences naming the headline defaults it filled. The CLI and the chat both build requests this way."""
    given = {name: value for name, value in fields.items() if value is not None}
    filled = [note for name, note in FILLED_NOTES.items() if name not in given]
    gpus = given.get("num_gpus", 1)
    if "sharding" not in given and isinstance(gpus, int) and gpus > 1:
        given["sharding"] = "fsdp"
        filled.append(f"sharding not given: FSDP full sharding over the {gpus} GPUs assumed")
    return EstimateRequest(**given), filled


def request_for_spec(
    spec: JobSpec,
    *,
    num_gpus: int | None = None,
    sharding: Sharding | None = None,
    gpu: str | None = None,
    vram_gib: float | None = None,
) -> tuple[EstimateRequest, list[str]]:
    """The estimator request a JobSpec implies, and the defaults it had to fill (stated as assumptions): DEFAULTS
    (full fine-tuning, 2048 tokens, micro-batch 1, gradient checkpointing on, fused AdamW), FSDP on several GPUs.
    An unknown model name travels with its size, so the estimate can say which name it approximated."""
    if not spec.model and not spec.params_b:
        raise ValueError("the job needs a model name or a model size in billions of parameters (params_b)")
    gpus = num_gpus or spec.num_gpus or 1
    examples = example_sequence(spec)
    request, filled = request_with_defaults(
        {
            "model": spec.model,
            "params_b": spec.params_b,
            "method": spec.method,
            "precision": spec.precision,
            "optimizer": spec.optimizer,
            "micro_batch_size": spec.micro_batch_size,
            "seq_len": spec.seq_len or examples,
            "gradient_checkpointing": spec.gradient_checkpointing,
            "num_gpus": gpus,
            "sharding": sharding,
            "gpu": gpu,
            "vram_gib": vram_gib,
        }
    )
    if examples is not None:
        filled.insert(1, f"sequence length not given: {examples} tokens, one example's average length, assumed")
    return request, filled


def estimate_for_spec(
    spec: JobSpec,
    *,
    num_gpus: int | None = None,
    sharding: Sharding | None = None,
    gpu: str | None = None,
    vram_gib: float | None = None,
) -> Estimate:
    """Estimate for a JobSpec, filling what it leaves open with common defaults (see `request_for_spec`)."""
    request, filled = request_for_spec(spec, num_gpus=num_gpus, sharding=sharding, gpu=gpu, vram_gib=vram_gib)
    result = estimate(request)
    result.assumptions = filled + result.assumptions
    return result


def request_for_plan(
    spec: JobSpec,
    settings: Mapping[str, Any],
    *,
    gpu: str,
    gpus_per_node: int,
    total_gpus: int,
    vram_gib: float | None = None,
) -> EstimateRequest:
    """The estimator request of the run a ranked plan was priced with: its micro-batch, sequence length,
    checkpointing, sharding (HSDP shards within one node) and tensor-parallel degree (RankedOffer.settings)."""
    priced = {
        key: settings[key]
        for key in ("micro_batch_size", "seq_len", "gradient_checkpointing")
        if settings.get(key) is not None
    }
    group = gpus_per_node if settings.get("layout") == "hsdp" else total_gpus
    sharding: Any = settings.get("sharding") or ("ddp" if total_gpus > 1 else "none")  # validated by the request
    request, _ = request_for_spec(
        spec.model_copy(update=priced), num_gpus=group, sharding=sharding, gpu=gpu, vram_gib=vram_gib
    )
    degree = int(settings.get("tensor_parallel") or 1)
    return request.model_copy(update={"tensor_parallel": degree}) if degree > 1 else request
