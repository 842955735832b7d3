"""Inverse questions: the largest model that fits a card, a GPU count or a budget; the longest sequence or largest
micro-batch on the plan's hardware; the smallest GPU that holds the job. Each answer comes with its numbers; which of
these a message asks is read here too (`inverse_topic`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agent.graph.acts.cues import has, sentences
from agent.graph.acts.texts import act_templates, with_limits
from agent.writing import money, number, templates
from contract.jobspec import JobSpec

GB_TO_GIB = 1e9 / 2**30
DEFAULT_METHOD = "lora"
"""Method assumed when an inverse question names none and the thread has no job."""


def _job(state: dict[str, Any]) -> dict[str, Any]:
    """The job the question is about: the thread's plan with this turn's fields (the plan itself untouched)."""
    parsed = {k: v for k, v in (state.get("parsed") or {}).items() if k != "language"}
    return {**(state.get("spec") or {}), **parsed, "language": state["language"]}


def _hardware(state: dict[str, Any], job: dict[str, Any]) -> tuple[str | None, float | None, int]:
    """(GPU name, card GiB, count) the question is about: named in the turn, else the plan's hardware."""
    plan = ((state.get("ranking") or {}).get("offers") or [None])[0]
    gpu, count = job.get("gpu"), int(job.get("num_gpus") or 1)
    vram = job["gpu_memory_gb"] * GB_TO_GIB if job.get("gpu_memory_gb") and not gpu else None
    if not gpu and not vram and plan is not None:
        gpu, count = plan["gpu"], int(plan["total_gpus"])
    return gpu, vram, count


def _where(gpu: str | None, vram: float | None, count: int, job: dict[str, Any], language: str) -> str:
    """'one RTX4090', '2× H100', 'a 24 GB card'."""
    t = act_templates(language)
    if gpu:
        return t["where_card" if count == 1 else "where_cards"].format(gpu=gpu, count=count)
    return t["where_size"].format(size=number(job.get("gpu_memory_gb") or 0, language, 0))


def _fits(
    job: dict[str, Any], model: str | None, gpu: str | None, vram: float | None, count: int
) -> tuple[bool, float]:
    """Whether the job fits the hardware (with `model` in place of its own when given), and its per-GPU GiB."""
    from tools.jobtime import DEFAULT_MEMORY_MARGIN
    from tools.memory import estimate_for_spec

    spec = JobSpec.model_validate({**job, "model": model, "params_b": None} if model else job)
    estimate = estimate_for_spec(spec, num_gpus=count, sharding="fsdp" if count > 1 else None, gpu=gpu, vram_gib=vram)
    card = estimate.fit.vram_gib if estimate.fit else (vram or 0.0)
    return estimate.per_gpu_gib <= (1 - DEFAULT_MEMORY_MARGIN) * card, estimate.per_gpu_gib


def _models() -> list[Any]:
    """Registry decoders, smallest first."""
    from tools.models import all_models

    return sorted((m for m in all_models() if m.family not in ("bert",)), key=lambda m: m.total_params)


def _largest(candidates: list[Any], ok: Any) -> int | None:
    """Index of the largest candidate for which `ok` holds, by bisection (fit grows monotonically with size)."""
    low, high, best = 0, len(candidates) - 1, None
    while low <= high:
        mid = (low + high) // 2
        if ok(candidates[mid]):
            best, low = mid, mid + 1
        else:
            high = mid - 1
    return best


def largest_model(state: dict[str, Any], db_path: Path) -> tuple[list[str], dict[str, Any] | None]:
    """The largest registry model that fits the card (or the budget), with its figures."""
    from agent.graph.questions import ranked

    language = state["language"]
    t = act_templates(language)
    job = _job(state)
    job["method"] = job.get("method") or DEFAULT_METHOD
    method = templates(language)["method_names"].get(job["method"], job["method"])
    models = _models()
    budget = (state.get("parsed") or {}).get("budget")
    if budget:
        found: dict[str, dict[str, Any]] = {}

        def within(arch: Any) -> bool:
            """The model's best offer meets the budget."""
            ranking, _ = ranked(JobSpec.model_validate({**job, "model": arch.id, "params_b": None}), db_path, None)
            top = (ranking.get("offers") or [None])[0]
            if top is not None and top.get("meets_budget") is not False:
                found[arch.id] = top
                return True
            return False

        index = _largest(models, within)
        if index is None:
            return [
                t["inverse_model_none"].format(
                    where=money(budget["amount"], budget["currency"], language), method=method
                )
            ], None
        arch = models[index]
        top = found[arch.id]
        return [
            t["inverse_model_budget"].format(
                method=method,
                budget=money(budget["amount"], budget["currency"], language),
                model=arch.name,
                params=number(arch.total_params / 1e9, language, 1),
                rental=with_limits(top, job, language),
            )
        ], top
    gpu, vram, count = _hardware(state, job)
    if not gpu and not vram:
        gpu = "H100"
    where = _where(gpu, vram, count, job, language)
    needed: dict[str, float] = {}

    def fits(arch: Any) -> bool:
        """The model fits the hardware."""
        ok, gib = _fits(job, arch.id, gpu, vram, count)
        needed[arch.id] = gib
        return ok

    index = _largest(models, fits)
    if index is None:
        return [t["inverse_model_none"].format(where=where, method=method)], None
    arch = models[index]
    lines = [
        t["inverse_model"].format(
            where=where,
            method=method,
            model=arch.name,
            params=number(arch.total_params / 1e9, language, 1),
            needed=number(needed[arch.id], language, 1),
        )
    ]
    if index + 1 < len(models):
        lines.append(t["inverse_model_next"].format(model=models[index + 1].name))
    return lines, None


def longest(state: dict[str, Any], field: str) -> list[str]:
    """The longest sequence or largest micro-batch that fits the plan's (or the named) hardware."""
    from tools.memory import estimate_for_spec

    language = state["language"]
    t = act_templates(language)
    job = _job(state)
    gpu, vram, count = _hardware(state, job)
    spec = JobSpec.model_validate(job)
    estimate = estimate_for_spec(
        spec, num_gpus=count, sharding="fsdp" if count > 1 else None, gpu=gpu or "H100", vram_gib=vram
    )
    fit = estimate.fit
    where = _where(gpu or "H100", vram, count, job, language)
    if fit is None or not (fit.max_seq_len if field == "seq_len" else fit.max_micro_batch_size):
        return [t["inverse_nothing"].format(where=where)]
    seq = number(fit.max_seq_len if field == "seq_len" else (spec.seq_len or 2048), language, 0)
    batch = number(
        fit.max_micro_batch_size if field == "micro_batch_size" else (spec.micro_batch_size or 1), language, 0
    )
    return [t["inverse_sequence" if field == "seq_len" else "inverse_batch"].format(where=where, seq=seq, batch=batch)]


def smallest_gpu(state: dict[str, Any], db_path: Path) -> tuple[list[str], dict[str, Any] | None]:
    """The smallest GPU (by memory) that holds the job on one card, and its best offer."""
    from agent.graph.questions import ranked
    from tools.gpus import all_gpus

    language = state["language"]
    t = act_templates(language)
    job = _job(state)
    for gpu in sorted({g.name: g for g in all_gpus() if g.memory_gib}.values(), key=lambda g: g.memory_gib):
        ok, needed = _fits({**job, "gpu": gpu.name, "num_gpus": 1}, None, gpu.name, None, 1)
        if ok:
            ranking, _ = ranked(JobSpec.model_validate({**job, "gpu": gpu.name, "num_gpus": 1}), db_path, None)
            top = (ranking.get("offers") or [None])[0]
            lines = [
                t["inverse_gpu"].format(
                    gpu=gpu.name, vram=number(gpu.memory_gib, language, 0), needed=number(needed, language, 1)
                )
            ]
            if top is not None:
                lines.append(with_limits(top, job, language) + ".")
                return lines, top
            continue  # not offered in the catalog: try the next size
    return fewest_gpus(state, db_path)


SHARDED_COUNTS = (2, 4, 8, 16, 32, 64)
"""GPU counts tried for a job no single card holds (the counts instances and nodes of 8 come in)."""


def fewest_gpus(state: dict[str, Any], db_path: Path) -> tuple[list[str], dict[str, Any] | None]:
    """For a job no single GPU holds: the fewest GPUs that hold it sharded (the smallest card at that count that is
    offered), and its best offer."""
    from agent.graph.questions import ranked
    from tools.gpus import all_gpus

    language = state["language"]
    t = act_templates(language)
    job = _job(state)
    cards = sorted({g.name: g for g in all_gpus() if g.memory_gib}.values(), key=lambda g: g.memory_gib)
    for count in SHARDED_COUNTS:
        for gpu in cards:
            ok, needed = _fits({**job, "gpu": gpu.name, "num_gpus": count}, None, gpu.name, None, count)
            if not ok:
                continue
            ranking, _ = ranked(JobSpec.model_validate({**job, "gpu": gpu.name, "num_gpus": count}), db_path, None)
            top = (ranking.get("offers") or [None])[0]
            if top is None:
                continue  # not offered at that count: the next card
            line = t["inverse_gpu_many"].format(
                count=count, gpu=gpu.name, vram=number(gpu.memory_gib, language, 0), needed=number(needed, language, 1)
            )
            return [line, with_limits(top, job, language) + "."], top
    return [t["inverse_gpu_none"].format(most=SHARDED_COUNTS[-1])], None


def answer(state: dict[str, Any], db_path: Path) -> tuple[list[str], dict[str, Any] | None]:
    """The lines answering an inverse question (topic in `act_topic`) and the offer they name."""
    topic = state.get("act_topic") or "model"
    job = _job(state)
    if topic == "model":
        return largest_model(state, db_path)
    if not job.get("model") and not job.get("params_b"):
        return [act_templates(state["language"])["inverse_needs_job"]], None
    if topic == "smallest_gpu":
        return smallest_gpu(state, db_path)
    return longest(state, "seq_len" if topic == "sequence" else "micro_batch_size"), None


def inverse_clause(text: str, language: str) -> str:
    """The sentence that asks the inverse question ("...on 20M tokens. What's the smallest setup?": the last one),
    so the job stated around it does not decide what is asked."""
    return next((c for c in sentences(text, colon=True) if has("inverse", c, language)), text)


def inverse_topic(text: str, language: str) -> str:
    """What an inverse question asks for: a model, a sequence length, a batch, the smallest GPU, or the smallest
    setup (what to rent) for a job."""
    lowered = inverse_clause(text, language).lower()
    if re.search(r"\b(?:gpu|card|scheda|kartu)\b", lowered) and re.search(
        r"smallest|cheapest|minim|piccol|kecil|murah|least", lowered
    ):
        return "smallest_gpu"
    if re.search(r"sequen|seq\b|context|contesto|konteks|panjang|lung[ao]|longest|token", lowered):
        return "sequence"
    if re.search(r"batch", lowered):
        return "batch"
    if has("setup", lowered, language):
        return "setup"
    return "model"
