"""What fits: the largest micro-batch and sequence length, and ranked changes that lower memory."""

from __future__ import annotations

from dataclasses import dataclass

from tools.memory.peak import gib, per_gpu_bytes, with_changes
from tools.memory.request import Fix
from tools.memory.setup import LORA_TARGET_GROUPS, Setup
from tools.models import ModelArch


def largest_fitting(setup: Setup, field: str, vram_bytes: float, upper: int) -> int | None:
    """Largest value of an integer field (micro-batch or sequence length) whose estimate fits.

    Memory never falls as either grows (tests/test_estimator_properties.py), so exactly one value is the largest
    that fits, and any search that keeps `low` fitting and `high` not finds it: this one probes where the straight
    line between the two crosses the memory (the estimate is close to linear in both) and the value beside it, and
    halves the bracket whenever that did not, so it takes a handful of estimates where bisection took ~20."""

    def need(value: int) -> float:
        """Per-GPU bytes with the field at `value`."""
        return per_gpu_bytes(with_changes(setup, **{field: value}))

    low_bytes = need(1)
    if low_bytes > vram_bytes:
        return None
    high_bytes = need(upper)
    if high_bytes <= vram_bytes:
        return upper
    low, high = 1, upper
    while high - low > 1:
        width = high - low
        crossing = low + int((vram_bytes - low_bytes) / (high_bytes - low_bytes) * width)
        probe = min(max(crossing, low + 1), high - 1)
        needed = need(probe)
        low, low_bytes, high, high_bytes = _narrowed(low, low_bytes, high, high_bytes, probe, needed, vram_bytes)
        beside = probe + 1 if needed <= vram_bytes else probe - 1
        if low < beside < high:
            low, low_bytes, high, high_bytes = _narrowed(
                low, low_bytes, high, high_bytes, beside, need(beside), vram_bytes
            )
        if high - low > max(width // 2, 1):  # the line misled: bisect once
            middle = (low + high) // 2
            low, low_bytes, high, high_bytes = _narrowed(
                low, low_bytes, high, high_bytes, middle, need(middle), vram_bytes
            )
    return low


def _narrowed(
    low: int, low_bytes: float, high: int, high_bytes: float, value: int, needed: float, vram_bytes: float
) -> tuple[int, float, int, float]:
    """The bracket (fitting low, not fitting high, with their bytes) once `value` is known to need `needed`."""
    if needed <= vram_bytes:
        return value, needed, high, high_bytes
    return low, low_bytes, value, needed


@dataclass(frozen=True, kw_only=True)
class _Candidate:
    """A memory-saving change: its request-level fields and the same change on a Setup."""

    code: str
    description: str
    changes: dict[str, object]
    setup_changes: dict[str, object]


def _all_linear(arch: ModelArch) -> tuple[str, ...]:
    """LoRA 'all-linear' targets present in `arch`."""
    return tuple(m for m in LORA_TARGET_GROUPS["all-linear"] if m in arch.linear_shapes)


def _candidate_fixes(setup: Setup) -> list[_Candidate]:
    """Changes that lower memory, cheapest first (free, then compute, then quality, then hardware)."""
    fixes: list[_Candidate] = []
    if setup.batch > 1:
        fixes.append(
            _Candidate(
                code="micro_batch_1",
                description="micro-batch 1 with gradient accumulation (same effective batch)",
                changes={"micro_batch_size": 1},
                setup_changes={"batch": 1},
            )
        )
    if not setup.flash:
        fixes.append(
            _Candidate(
                code="flash_attention",
                description="use FlashAttention / SDPA",
                changes={"flash_attention": True},
                setup_changes={"flash": True},
            )
        )
    if not setup.checkpointing:
        fixes.append(
            _Candidate(
                code="gradient_checkpointing",
                description="turn on gradient checkpointing (about 30 % more compute)",
                changes={"gradient_checkpointing": True},
                setup_changes={"checkpointing": True},
            )
        )
    if setup.optimizer == "adamw":
        fixes.append(
            _Candidate(
                code="adamw_8bit",
                description="8-bit AdamW (bitsandbytes)",
                changes={"optimizer": "adamw_8bit"},
                setup_changes={"optimizer": "adamw_8bit"},
            )
        )
    if setup.method == "full_finetune":
        fixes.append(
            _Candidate(
                code="lora",
                description="LoRA (rank 16, all linear layers) instead of full fine-tuning",
                changes={"method": "lora", "precision": "bf16"},
                setup_changes={
                    "method": "lora",
                    "precision": "bf16",
                    "rank": 16,
                    "lora_modules": _all_linear(setup.arch),
                },
            )
        )
    if setup.method in ("full_finetune", "lora"):
        fixes.append(
            _Candidate(
                code="qlora",
                description="QLoRA (4-bit base) instead",
                changes={"method": "qlora", "precision": "bf16"},
                setup_changes={
                    "method": "qlora",
                    "precision": "bf16",
                    "rank": setup.rank if setup.adapters else 16,
                    "lora_modules": setup.lora_modules or _all_linear(setup.arch),
                },
            )
        )
    if setup.gpus > 1 and setup.sharding in ("none", "ddp", "zero1", "zero2"):
        fixes.append(
            _Candidate(
                code="zero3",
                description=f"shard weights, gradients and optimizer state over the {setup.gpus} GPUs (ZeRO-3/FSDP)",
                changes={"sharding": "zero3"},
                setup_changes={"sharding": "zero3"},
            )
        )
    if setup.gpus == 1 and not setup.adapters and setup.offload == "none":
        fixes.append(
            _Candidate(
                code="offload",
                description="ZeRO-Offload: optimizer state in CPU RAM (slower steps)",
                changes={"sharding": "zero2", "offload": "optimizer"},
                setup_changes={"sharding": "zero2", "offload": "optimizer"},
            )
        )
    return fixes


CHEAP_FIX_CODES = ("micro_batch_1", "flash_attention", "gradient_checkpointing", "adamw_8bit")
"""Fixes that keep the method and hardware; the 'combined' fix stacks them."""


def _more_gpus_fix(setup: Setup, vram_bytes: float, cheap: _Candidate | None) -> _Candidate | None:
    """The smallest power-of-two GPU count (up to 512) that fits with ZeRO-3 sharding, alone or on top of the cheap
    fixes when sharding alone cannot fit (activations do not shrink with more GPUs)."""
    sharding = setup.sharding if setup.sharding in ("zero3", "fsdp") else "zero3"
    for extra in ({}, cheap.setup_changes if cheap else None):
        if extra is None:
            continue
        count = max(2, setup.gpus * 2)
        while count <= 512:
            changes = extra | {"gpus": count, "sharding": sharding}
            if per_gpu_bytes(with_changes(setup, **changes)) <= vram_bytes:
                request_changes = (cheap.changes if extra and cheap else {}) | {"num_gpus": count, "sharding": sharding}
                also = f" plus {cheap.description.removeprefix('all of: ')}" if extra and cheap else ""
                return _Candidate(
                    code="more_gpus",
                    description=f"{count} GPUs with ZeRO-3/FSDP sharding{also}",
                    changes=request_changes,
                    setup_changes=changes,
                )
            count *= 2
    return None


def ranked_fixes(setup: Setup, vram_bytes: float) -> list[Fix]:
    """Fixes that lower memory: those that fit first (cheapest first), then the rest by memory reached."""
    candidates = _candidate_fixes(setup)
    cheap = [c for c in candidates if c.code in CHEAP_FIX_CODES]
    combined = (
        _Candidate(
            code="combined",
            description="all of: " + ", ".join(c.description for c in cheap),
            changes={k: v for c in cheap for k, v in c.changes.items()},
            setup_changes={k: v for c in cheap for k, v in c.setup_changes.items()},
        )
        if cheap
        else None
    )
    if combined is not None and len(cheap) > 1:
        candidates.append(combined)
    more = _more_gpus_fix(setup, vram_bytes, combined)
    if more is not None:
        candidates.append(more)
    current = per_gpu_bytes(setup)
    fixes = []
    for rank, candidate in enumerate(candidates):
        reached = per_gpu_bytes(with_changes(setup, **candidate.setup_changes))
        if reached < current:
            fixes.append(
                (
                    rank,
                    Fix(
                        code=candidate.code,
                        description=candidate.description,
                        changes=candidate.changes,
                        per_gpu_gib=gib(reached),
                        fits=reached <= vram_bytes,
                    ),
                )
            )
    fixes.sort(key=lambda item: (not item[1].fits, item[0] if item[1].fits else item[1].per_gpu_gib))
    return [fix for _, fix in fixes]
