"""The memory model's fast paths (issue 27) give, bit for bit, what the code gave before them.

`tests/data/memory_speed_reference.json` holds per-GPU bytes (float.hex, every bit), GiB figures and estimates
recorded from the memory model as it was before the speed work, for a seeded sample of requests over every registry
model, method, precision, optimizer, sharding, GPU count, tensor/pipeline degree, checkpointing, micro-batch and
sequence length, each with a second layout asked through `layout_gib`. Regenerate it only from code known to be
right: `.venv/bin/python -m tests.test_memory_speed_equivalence --record`.

A property test then draws new requests and checks that the fast copies (`with_changes`, `layout_gib`) agree
exactly with setups built from scratch for the same request."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tools.memory.estimator import Estimate, estimate, layout_gib, setup_gib
from tools.memory.peak import peak_terms, per_gpu_bytes, with_changes
from tools.memory.request import EstimateRequest
from tools.memory.setup import build_setup, check_degrees, resolve_arch
from tools.models import all_models

REFERENCE = Path(__file__).parent / "data" / "memory_speed_reference.json"
MODELS = [arch.id for arch in all_models()]
METHODS = ["full_finetune", "pretrain", "lora", "qlora"]
PRECISIONS = [None, "fp32", "amp_bf16", "amp_fp16", "bf16", "fp16"]
OPTIMIZERS = ["adamw", "adamw", "adamw_8bit", "paged_adamw_8bit", "sgd", "adafactor"]
SHARDINGS = ["none", "ddp", "zero1", "zero2", "zero3", "fsdp"]
TARGETS = ["all-linear", "attention", "q_proj,v_proj", "mlp"]
REQUEST_FIELDS = (
    "model",
    "method",
    "precision",
    "optimizer",
    "optimizer_impl",
    "micro_batch_size",
    "seq_len",
    "gradient_checkpointing",
    "flash_attention",
    "lora_rank",
    "lora_targets",
    "num_gpus",
    "sharding",
    "tensor_parallel",
    "pipeline_parallel",
    "offload",
    "loss",
    "qlora_upcast",
    "vram_gib",
)
"""The request fields a case sets, in the order the reference file lists their values."""


def _random_request(rng: random.Random) -> EstimateRequest | None:
    """One request drawn from the sample space, or None when the draw is not a valid request."""
    gpus = rng.choice([1, 1, 2, 4, 8, 16])
    sharding = "none" if gpus == 1 and rng.random() < 0.5 else rng.choice(SHARDINGS)
    offload = rng.choice(["none", "none", "none", "optimizer", "optimizer+params"])
    fields: dict[str, Any] = {
        "model": rng.choice(MODELS),
        "method": rng.choice(METHODS),
        "precision": rng.choice(PRECISIONS),
        "optimizer": rng.choice(OPTIMIZERS),
        "optimizer_impl": rng.choice(["fused", "foreach", "for_loop"]),
        "micro_batch_size": rng.choice([1, 1, 2, 3, 4, 8, 16]),
        "seq_len": rng.choice([128, 517, 1000, 2048, 4096, 8192, 32768]),
        "gradient_checkpointing": rng.random() < 0.6,
        "flash_attention": rng.random() < 0.8,
        "lora_rank": rng.choice([8, 16, 64]),
        "lora_targets": rng.choice(TARGETS),
        "num_gpus": gpus,
        "sharding": sharding,
        "tensor_parallel": rng.choice([1, 1, 1, 2, 4, 8]),
        "pipeline_parallel": rng.choice([1, 1, 1, 1, 2, 4]),
        "offload": offload,
        "loss": rng.choice(["fp32", "fp32", "half", "fused"]),
        "qlora_upcast": rng.choice([None, None, True, False]),
    }
    if rng.random() < 0.2:
        fields["vram_gib"] = rng.choice([16.0, 24.0, 48.0, 80.0, 141.0])
    try:
        request = EstimateRequest(**fields)
        build_setup(request, resolve_arch(request))
    except ValueError:
        return None
    return request


def _random_layout(rng: random.Random) -> dict[str, Any]:
    """A second layout for `layout_gib`."""
    return {
        "gpus": rng.choice([1, 2, 4, 8]),
        "sharding": rng.choice(["ddp", "zero2", "zero3", "fsdp", "none"]),
        "tp": rng.choice([1, 1, 2, 4]),
        "checkpointing": rng.random() < 0.5,
        "batch": rng.choice([1, 2, 4, 7]),
    }


def _bits(value: float) -> str:
    """Every bit of a number and its type: float.hex for a float ('0x...'), the digits of an int."""
    return value.hex() if isinstance(value, float) else str(value)


def _estimate_figures(result: Estimate) -> list[Any]:
    """The figures of an estimate the memory model computes (its texts left out)."""
    figures: list[Any] = [result.allocated_gib, result.reserved_gib, result.per_gpu_gib, result.host_ram_gib]
    figures.append(result.breakdown_gib)
    if result.fit is not None:
        fit = result.fit
        fixes = [[fix.code, fix.per_gpu_gib, fix.fits] for fix in fit.fixes]
        figures.append([fit.fits, fit.headroom_gib, fit.max_micro_batch_size, fit.max_seq_len, fixes])
    return figures


def _observed(request: EstimateRequest, layout: dict[str, Any]) -> dict[str, Any]:
    """Everything recorded for one request and its second layout (bytes as float.hex: every bit)."""
    stated = build_setup(request, resolve_arch(request))
    result = estimate(request)
    terms, phase, host, trainable = peak_terms(stated)
    observed: dict[str, Any] = {
        "per_gpu_bytes": _bits(per_gpu_bytes(stated)),
        "setup_gib": _bits(setup_gib(stated)),
        "terms": {name: _bits(value) for name, value in terms.items()},
        "phase": phase,
        "host": _bits(host),
        "trainable": trainable,
        "estimate": _estimate_figures(result),
    }
    if layout["gpus"] % (layout["tp"] * stated.pp):
        return observed  # not a layout: the GPUs do not split into tensor x pipeline groups
    try:
        check_degrees(stated.arch, layout["tp"], stated.pp)
    except ValueError:
        return observed
    observed["layout_gib"] = _bits(layout_gib(stated, **layout))
    observed["layout_bytes"] = _bits(
        per_gpu_bytes(
            with_changes(
                stated,
                gpus=layout["gpus"],
                sharding=layout["sharding"],
                tp=layout["tp"],
                checkpointing=layout["checkpointing"],
                batch=layout["batch"],
            )
        )
    )
    return observed


def _cases(count: int, seed: int = 27) -> list[dict[str, Any]]:
    """`count` valid requests with their second layouts, drawn from a seeded generator."""
    rng = random.Random(seed)
    cases: list[dict[str, Any]] = []
    while len(cases) < count:
        request = _random_request(rng)
        layout = _random_layout(rng)
        if request is not None:
            fields = request.model_dump()
            cases.append({"request": [fields[name] for name in REQUEST_FIELDS], "layout": layout})
    return cases


def _record(count: int = 400) -> None:
    """Write the reference file from the code as it is now."""
    cases = _cases(count)
    for case in cases:
        case["observed"] = _observed(_request(case["request"]), case["layout"])
    REFERENCE.write_text(json.dumps(cases, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")


def _request(values: list[Any]) -> EstimateRequest:
    """The request a case lists."""
    return EstimateRequest(**dict(zip(REQUEST_FIELDS, values, strict=True)))


def _reference() -> list[dict[str, Any]]:
    """The recorded cases."""
    return json.loads(REFERENCE.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_the_reference_covers_the_space() -> None:
    cases = _reference()
    requests = [_request(case["request"]) for case in cases]
    assert {r.method for r in requests} >= {"full_finetune", "lora", "qlora"}
    assert {r.sharding for r in requests} == set(SHARDINGS)
    assert {r.tensor_parallel for r in requests} >= {1, 2, 4}
    assert {r.pipeline_parallel for r in requests} >= {1, 2}
    assert len({r.model for r in requests}) > 40
    assert sum("layout_gib" in case["observed"] for case in cases) > len(cases) // 2
    assert sum(r.method == "qlora" and r.qlora_upcast is None for r in requests) > 30
    assert sum(r.vram_gib is not None for r in requests) > 40


@pytest.mark.parametrize("part", range(4))
def test_every_figure_equals_the_recorded_one_bit_for_bit(part: int) -> None:
    cases = _reference()
    for case in cases[part::4]:
        assert _observed(_request(case["request"]), case["layout"]) == case["observed"], case["request"]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_fast_copies_equal_setups_built_from_scratch(seed: int) -> None:
    """layout_gib and with_changes give what build_setup gives for the same request with that layout."""
    rng = random.Random(seed)
    request = _random_request(rng)
    layout = _random_layout(rng)
    if request is None or request.offload != "none" or request.num_gpus % (layout["tp"] * request.pipeline_parallel):
        return
    base = build_setup(request, resolve_arch(request))
    changed = request.model_copy(
        update={
            "num_gpus": layout["gpus"],
            "sharding": layout["sharding"],
            "tensor_parallel": layout["tp"],
            "gradient_checkpointing": layout["checkpointing"],
            "micro_batch_size": layout["batch"],
        }
    )
    try:
        scratch = build_setup(EstimateRequest(**changed.model_dump()), resolve_arch(request))
    except ValueError:
        return
    copied = with_changes(
        base,
        gpus=layout["gpus"],
        sharding=layout["sharding"],
        tp=layout["tp"],
        checkpointing=layout["checkpointing"],
        batch=layout["batch"],
    )
    assert copied == scratch and hash(copied) == hash(scratch)
    assert layout_gib(base, **layout) == setup_gib(scratch)
    assert per_gpu_bytes(copied) == per_gpu_bytes(scratch)
    assert setup_gib(scratch) == estimate(changed.model_copy(update={"vram_gib": None, "gpu": None})).per_gpu_gib


if __name__ == "__main__" and "--record" in sys.argv:
    _record()
