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

from contract.jobspec import MAX_SEQ_LEN, JobSpec
from tools.fit_search import largest_fitting, ranked_fixes
from tools.memory_peak import (
    ALLOCATOR_RESERVE_FRACTION,
    NCCL_GIB,
    allocator_reserve,
    gib,
    overhead_bytes,
    peak_terms,
)
from tools.memory_request import (
    GIB,
    Estimate,
    EstimateRequest,
    FitReport,
    Fix,
    Offload,
    Sharding,
)
from tools.memory_setup import Setup, build_setup, lora_params, resolve_arch
from tools.models import ModelArch

__all__ = ["GIB", "Estimate", "EstimateRequest", "FitReport", "Fix", "Offload", "Sharding", "estimate",
           "estimate_for_spec", "lora_params", "request_for_spec", "resolve_arch"]


def precision_note(setup: Setup) -> str:
    """What the precision means for weights and activations."""
    if setup.method == "qlora":
        return f"QLoRA: 4-bit base, {setup.precision} compute, fp32 residual stream"
    return f"precision {setup.precision}: " + {"fp32": "fp32 weights and activations",
                                               "mixed": "fp32 weights and residual stream, 16-bit matmuls",
                                               "half": "16-bit weights and activations"}[setup.profile]


def assumptions_for(setup: Setup, arch: ModelArch) -> list[str]:
    """The stated assumptions behind one estimate."""
    notes = [
        precision_note(setup),
        "FlashAttention/SDPA (no s^2 score matrices)" if setup.flash else "eager attention (s^2 scores kept)",
        {"fp32": "HF-style loss: logits upcast to fp32 for cross-entropy", "half": "loss on 16-bit logits",
         "fused": "fused linear cross-entropy (no full logits tensor)"}[setup.loss],
        f"CUDA context {setup.context_bytes / GIB:g} GiB; allocator reserve {int(ALLOCATOR_RESERVE_FRACTION * 100)} % of the "
        "peak plus one fp32-logits-sized segment" + (f"; NCCL {NCCL_GIB} GiB" if setup.gpus > 1 else ""),
    ]
    if setup.optimizer == "adamw" and setup.sharding not in ("zero1", "zero2", "zero3"):
        notes.append("torch AdamW foreach implementation (one state-sized temporary in the step)")
    if setup.adapters:
        notes.append(f"LoRA rank {setup.rank} on {', '.join(setup.lora_modules)}; adapters, their gradients and "
                     "Adam states in fp32 (PEFT default)")
    if setup.method == "qlora":
        notes.append("NF4 base with double quantisation; embeddings, head and norms in "
                     + ("fp32 (prepare_model_for_kbit_training)" if setup.profile == "mixed" else "16-bit"))
    if setup.checkpointing:
        notes.append("gradient checkpointing per decoder layer (layer inputs kept, one layer recomputed at a time)")
    if arch.approximate:
        notes.append(f"unknown model: standard Llama-style decoder scaled to {arch.total_params / 1e9:.3g}B "
                     f"parameters (about {arch.layers:.0f} layers, hidden {arch.hidden:.0f}); approximate")
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
    if spec is None:
        raise ValueError(f"unknown GPU '{request.gpu}'; give --vram-gib instead")
    return spec.name, float(spec.memory_gib)


def estimate(request: EstimateRequest) -> Estimate:
    """Estimate per-GPU peak memory for `request`, and check the fit when a GPU or VRAM size is given."""
    arch = resolve_arch(request)
    setup = build_setup(request, arch)
    terms, phase, host, trainable = peak_terms(setup)
    allocated = sum(terms.values())
    overhead = overhead_bytes(allocated, setup)
    breakdown = {name: gib(value) for name, value in terms.items()} | {"overhead": gib(overhead)}
    result = Estimate(
        model_id=arch.id, model_name=arch.name, approximate=arch.approximate, method=setup.method,  # type: ignore[arg-type]
        precision=setup.precision, allocated_gib=gib(allocated),
        reserved_gib=gib(allocated + allocator_reserve(allocated, setup)), per_gpu_gib=gib(allocated + overhead),  # type: ignore[arg-type]
        breakdown_gib=breakdown, peak_phase=phase, total_params=arch.total_params, trainable_params=trainable,
        active_params=arch.active_params, host_ram_gib=gib(host) if host else None,
        assumptions=assumptions_for(setup, arch),
    )
    gpu_name, vram = vram_for(request)
    if vram is not None:
        vram_bytes = vram * GIB
        per_gpu = allocated + overhead
        fits = per_gpu <= vram_bytes
        result.fit = FitReport(
            gpu=gpu_name, vram_gib=vram, fits=fits, headroom_gib=round((vram_bytes - per_gpu) / GIB, 3),
            max_micro_batch_size=largest_fitting(setup, "batch", vram_bytes, 65_536),
            max_seq_len=largest_fitting(setup, "seq", vram_bytes, min(MAX_SEQ_LEN, 4 * 1024 * 1024)),
            fixes=[] if fits else ranked_fixes(setup, vram_bytes),
        )
    return result


def request_for_spec(spec: JobSpec, *, num_gpus: int | None = None, sharding: Sharding | None = None,
                     gpu: str | None = None, vram_gib: float | None = None) -> tuple[EstimateRequest, list[str]]:
    """The estimator request a JobSpec implies, and the defaults it had to fill (stated as assumptions): full
    fine-tuning, 2048 tokens, micro-batch 1, gradient checkpointing on (TRL's SFT default), AdamW, FSDP on several
    GPUs."""
    if not spec.model and not spec.params_b:
        raise ValueError("the job needs a model name or a model size in billions of parameters (params_b)")
    filled = []
    if spec.method is None:
        filled.append("method not given: full fine-tuning assumed")
    if spec.seq_len is None:
        filled.append("sequence length not given: 2048 tokens assumed")
    if spec.micro_batch_size is None:
        filled.append("micro-batch size not given: 1 sequence per GPU assumed")
    if spec.gradient_checkpointing is None:
        filled.append("gradient checkpointing not given: on assumed (the usual fine-tuning recipe)")
    gpus = num_gpus or spec.num_gpus or 1
    request = EstimateRequest(
        model=spec.model, params_b=None if spec.model else spec.params_b, method=spec.method or "full_finetune",
        precision=spec.precision, optimizer=spec.optimizer or "adamw", micro_batch_size=spec.micro_batch_size or 1,
        seq_len=spec.seq_len or 2048,
        gradient_checkpointing=True if spec.gradient_checkpointing is None else spec.gradient_checkpointing,
        num_gpus=gpus, sharding=sharding or ("fsdp" if gpus > 1 else "none"), gpu=gpu, vram_gib=vram_gib)
    return request, filled


def estimate_for_spec(spec: JobSpec, *, num_gpus: int | None = None, sharding: Sharding | None = None,
                      gpu: str | None = None, vram_gib: float | None = None) -> Estimate:
    """Estimate for a JobSpec, filling what it leaves open with common defaults (see `request_for_spec`)."""
    request, filled = request_for_spec(spec, num_gpus=num_gpus, sharding=sharding, gpu=gpu, vram_gib=vram_gib)
    result = estimate(request)
    result.assumptions = filled + result.assumptions
    return result
