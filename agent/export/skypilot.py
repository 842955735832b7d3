"""The recommendation as a SkyPilot task: resources, nodes, spot recovery and a run skeleton, commented in the
user's language. Built from one turn's result (what `recommend --json` prints); every value comes from it."""

from __future__ import annotations

import json
import math
import re
import textwrap
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import prompts
from agent.export.yaml_text import Commented, render_yaml
from contract.languages import supported_or_default
from tools.providers import all_records

SKYPILOT_CLOUDS = frozenset(
    record.skypilot.cloud
    for record in all_records().values()
    if record.skypilot is not None and record.skypilot.launchable
)
"""Catalog providers SkyPilot 0.14 can launch on (each provider record's `skypilot`; its `infra` cloud names)."""

SYSTEM_DISK_GB = 60
"""Image, Python packages and caches on the boot disk."""
BYTES_PER_TOKEN_ON_DISK = 4
"""Raw text is about four bytes per token (English BPE); stated in the disk comment."""
METHOD_PACKAGES = {
    "qlora": "torch transformers datasets accelerate peft trl bitsandbytes",
    "lora": "torch transformers datasets accelerate peft trl",
    "full_finetune": "torch transformers datasets accelerate trl deepspeed",
    "pretrain": "torch transformers datasets accelerate deepspeed",
}
LAUNCHER_FLAGS = {
    "single_gpu": "",
    "ddp": "--multi_gpu",
    "zero2": "--use_deepspeed --zero_stage 2",
    "fsdp": "--use_fsdp --fsdp_sharding_strategy FULL_SHARD",
    "tensor_parallel": "--multi_gpu",
}


class ExportError(ValueError):
    """The turn cannot become a SkyPilot task (no recommended offer, or a provider SkyPilot cannot launch)."""


@dataclass(frozen=True, kw_only=True)
class SkyPilotTask:
    """A SkyPilot task for one recommendation."""

    config: dict[str, Any]
    """The task as SkyPilot reads it (`sky.Task.from_yaml_config`)."""
    yaml: str
    """The same task as commented YAML, in the user's language."""
    launch_command: str
    """`sky jobs launch task.yaml` (spot, with recovery) or `sky launch task.yaml` (on-demand)."""
    required_env: list[str] = field(default_factory=list)
    """Variables to give at launch (`--env NAME=...`): the dataset, and the model repo when the registry lacks it."""
    offer: dict[str, Any] = field(default_factory=dict)
    """The offer the task launches: the recommended one, or the best launchable alternative (see `note`)."""
    note: str | None = None
    """When the recommended offer is on a cloud SkyPilot cannot launch: which offer the task uses instead and why,
    in the user's language (also the task's first comment); None otherwise."""


@cache
def _texts(language: str) -> dict[str, Any]:
    """The comment templates of one language."""
    return json.loads(prompts.load_in(supported_or_default(language), "skypilot.json"))


def _reason_param(offer: dict[str, Any], name: str) -> float | None:
    """A figure the ranking attached to one of the offer's reasons (e.g. the spot-risk checkpoint interval)."""
    for reason in offer.get("reasons") or []:
        value = (reason.get("params") or {}).get(name)
        if value:
            return float(value)
    return None


def _dataset_gb(spec: dict[str, Any], seq_len: int) -> float:
    """Dataset size on disk: given tokens, or examples x sequence length (an upper bound)."""
    tokens = spec.get("dataset_tokens") or (spec.get("dataset_examples") or 0) * seq_len
    return tokens * BYTES_PER_TOKEN_ON_DISK / 1e9


def _disk(
    estimate: dict[str, Any], spec: dict[str, Any], seq_len: int, bucket: bool = False
) -> tuple[int, dict[str, int]]:
    """Disk GB for model download (bf16), data and two checkpoints (adapters, or weights + Adam states); none for
    checkpoints that go to a mounted bucket."""
    total = float(estimate.get("total_params") or 0)
    trainable = float(estimate.get("trainable_params") or total)
    full = estimate.get("method") in ("full_finetune", "pretrain")
    parts = {
        "weights": math.ceil(total * 2 / 1e9),
        "dataset": math.ceil(_dataset_gb(spec, seq_len)),
        "checkpoints": 0 if bucket else math.ceil(2 * (total * 14 if full else trainable * 16) / 1e9),
        "system": SYSTEM_DISK_GB,
    }
    return max(100, 50 * math.ceil(sum(parts.values()) / 50)), parts


def _hf_repo(model_id: str | None) -> str | None:
    """The model's Hugging Face repo id when the registry knows the model."""
    from tools.models import lookup

    arch = lookup(model_id) if model_id else None
    return (arch.hf_repo or None) if arch is not None else None


def _accelerator_name(offer: dict[str, Any], db_path: Any) -> str:
    """The GPU name as SkyPilot's catalog writes it for this instance (our canonical name otherwise)."""
    if offer.get("accelerator_name"):
        return str(offer["accelerator_name"])
    from tools.catalog import query_offers

    rows = query_offers(db_path, provider=offer["provider"], gpu=offer.get("gpu"), limit=500)
    for row in rows:
        if row.instance_type == offer["instance_type"] and row.accelerator_name:
            return row.accelerator_name
    return str(offer.get("gpu"))


def _task_name(spec: dict[str, Any]) -> str:
    """A SkyPilot-safe task name from the model and method."""
    raw = f"{spec.get('model') or 'model'}-{spec.get('method') or 'train'}"
    return re.sub(r"[^a-z0-9-]+", "-", raw.lower()).strip("-")[:60] or "gpu-advisor"


def _priced_settings(result: dict[str, Any], offer: dict[str, Any]) -> dict[str, Any]:
    """The training settings the offer's memory, time and price were computed with: the ranking's record of them
    (tools.ranking.entries.settings_of) first, then the turn's estimate, then the spec, then the documented defaults."""
    settings = dict(offer.get("settings") or {})
    estimate, spec = result.get("estimate") or {}, result.get("spec") or {}
    checkpointing = settings.get("gradient_checkpointing")
    if checkpointing is None:
        checkpointing = estimate.get("gradient_checkpointing", spec.get("gradient_checkpointing"))
    return {
        "method": settings.get("method") or estimate.get("method") or spec.get("method") or "full_finetune",
        "micro_batch_size": int(settings.get("micro_batch_size") or spec.get("micro_batch_size") or 1),
        "seq_len": int(settings.get("seq_len") or spec.get("seq_len") or 2048),
        "gradient_checkpointing": checkpointing is not False,
        "layout": settings.get("layout") or offer.get("layout") or "single_gpu",
        "tensor_parallel": int(settings.get("tensor_parallel") or 1),
        "gradient_accumulation_steps": int(settings.get("gradient_accumulation_steps") or 1),
        "lora_rank": int(settings.get("lora_rank") or 16),
    }


def _envs(result: dict[str, Any], offer: dict[str, Any], texts: dict[str, Any]) -> tuple[dict, dict]:
    """Environment variables for the run script (None: to give at launch with --env) and their comments; the
    training settings are exactly those the price was computed with (_priced_settings)."""
    estimate, spec = result.get("estimate") or {}, result.get("spec") or {}
    priced = _priced_settings(result, offer)
    seq_len, micro, method = priced["seq_len"], priced["micro_batch_size"], priced["method"]
    repo = _hf_repo(estimate.get("model_id"))
    checkpoint_h = _reason_param(offer, "checkpoint_interval_hours") or 1.0
    tps = _reason_param(offer, "tokens_per_second")
    tokens_per_step = micro * seq_len * int(offer.get("total_gpus") or offer.get("gpu_count") or 1)
    save_steps = max(1, int(checkpoint_h * 3600 * tps / tokens_per_step)) if tps else 500
    envs: dict[str, Any] = {
        "MODEL_ID": repo,
        "DATASET": None,
        "METHOD": method,
        "PRECISION": estimate.get("precision") or "bf16",
        "MICRO_BATCH_SIZE": micro,
        "SEQ_LEN": seq_len,
        "GRADIENT_CHECKPOINTING": "true" if priced["gradient_checkpointing"] else "false",
        "GRADIENT_ACCUMULATION_STEPS": priced["gradient_accumulation_steps"],
        "LAYOUT": priced["layout"],
    }
    if priced["tensor_parallel"] > 1:
        envs["TENSOR_PARALLEL"] = priced["tensor_parallel"]
    if method in ("lora", "qlora"):
        envs["LORA_RANK"] = priced["lora_rank"]
    envs |= {
        "CHECKPOINT_EVERY_MINUTES": max(1, round(checkpoint_h * 60)),
        "SAVE_STEPS": save_steps,
        "CHECKPOINT_DIR": "/checkpoints" if offer.get("spot") else "~/checkpoints",
    }
    values = {
        "model": estimate.get("model_name") or spec.get("model"),
        "per_gpu": offer.get("per_gpu_gib"),
        "layout": envs["LAYOUT"],
    }
    comments = {k: v.format(**values) for k, v in texts["env_comments"].items() if k in envs}
    return envs, comments


def _fill(template: str, **values: str) -> str:
    """Replace `{name}` placeholders by name only (shell `${VAR:+...}` braces in scripts stay as they are)."""
    for name, value in values.items():
        template = template.replace("{" + name + "}", value)
    return template


def _run_script(method: str, layout: str, precision: str) -> str:
    """The run skeleton: TRL's SFT script under accelerate for fine-tuning, torchrun + your script for pretraining."""
    if method == "pretrain":
        return prompts.load("skypilot_run_pretrain.txt")
    flags = {
        "qlora": '--use_peft --lora_r "$LORA_RANK" --lora_target_modules all-linear --load_in_4bit ',
        "lora": '--use_peft --lora_r "$LORA_RANK" --lora_target_modules all-linear ',
    }.get(method, "")
    return _fill(
        prompts.load("skypilot_run_finetune.txt"),
        launcher_flags=LAUNCHER_FLAGS.get(layout, "--multi_gpu"),
        method_flags=flags,
        precision_flag="fp16" if "fp16" in precision else "bf16",
    )


def _price(offer: dict[str, Any]) -> str:
    """The hourly price of the offer as shown in comments."""
    value = offer.get("price_per_hour")
    return "?" if value is None else f"${value:,.2f}"


def _ranked_on_skypilot_clouds(spec: dict[str, Any], db_path: Any) -> dict[str, Any] | None:
    """The headline of the same job ranked on the clouds SkyPilot launches only (None when none runs it)."""
    from contract.jobspec import JobSpec
    from tools.ranking import rank_offers

    try:
        job = JobSpec.model_validate({**spec, "providers": sorted(SKYPILOT_CLOUDS)})
        ranking = rank_offers(job, db_path=db_path, limit=1)
    except (ValueError, TypeError, OverflowError):  # no job to rank (a bare result) or none that runs it
        return None
    return ranking.offers[0].model_dump(mode="json") if ranking.offers else None


def launchable_offer(result: dict[str, Any], db_path: Any = None) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(offer to export, the recommended offer it replaces or None): the recommended offer when SkyPilot launches
    its cloud, else the best launchable one: the turn's job ranked again on those clouds only (the same choice from
    the widget's one offer as from a full result), else the first of the turn's own offers on such a cloud.
    ExportError when there is nothing to export."""
    offers = result.get("offers") or []
    if not offers:
        raise ExportError("this conversation has no recommended offer yet: ask for a job first")
    first = offers[0]
    if not isinstance(first, dict) or not first.get("provider"):
        raise ExportError("the result cannot be exported: its first offer names no provider")
    if str(first.get("provider")) in SKYPILOT_CLOUDS:
        return first, None
    alternative = _ranked_on_skypilot_clouds(result.get("spec") or {}, db_path) or next(
        (o for o in offers[1:] if str(o.get("provider")) in SKYPILOT_CLOUDS and o.get("fits") is not False), None
    )
    if alternative is None:
        raise ExportError(
            f"SkyPilot cannot launch on {first.get('provider')} and no offer on a cloud it supports "
            f"runs this job; rent this offer from the provider directly"
        )
    return alternative, first


def exported_offer(offer: dict[str, Any]) -> dict[str, Any]:
    """The few fields that say which offer a task launches."""
    keys = ("provider", "instance_type", "region", "gpu", "total_gpus", "spot", "est_cost", "est_hours")
    return {key: offer.get(key) for key in keys}


def _alternative_note(offer: dict[str, Any], replaced: dict[str, Any], language: str) -> str:
    """Which launchable offer the task uses instead of the recommended one, and why, in the user's language."""
    from agent.writing import hours, money

    def rental(item: dict[str, Any]) -> str:
        """'2× A100-80GB'."""
        return f"{item.get('total_gpus') or item.get('gpu_count') or 1}× {item.get('gpu') or '?'}"

    def cost(item: dict[str, Any]) -> str:
        """The plan's total job cost, or '?' when the result does not carry it."""
        value = item.get("est_cost")
        return money(float(value), "USD", language) if isinstance(value, (int, float)) else "?"

    region = offer.get("region")
    return _texts(language)["alternative"].format(
        before=rental(replaced),
        provider_before=replaced.get("provider") or "?",
        cost_before=cost(replaced),
        after=rental(offer),
        provider=offer.get("provider"),
        where=f" ({region})" if region else "",
        cost=cost(offer),
        hours=hours(float(offer.get("est_hours") or 0), language),
    )


def build_task(result: dict[str, Any], *, db_path: Any = None) -> SkyPilotTask:
    """The SkyPilot task for a turn's recommended offer (its first offer), or for the best launchable alternative when
    SkyPilot cannot launch that one's cloud (said in `note`); ExportError when there is none."""
    offer, replaced = launchable_offer(result, db_path)
    spec, estimate = result.get("spec") or {}, result.get("estimate") or {}
    language = result.get("language") or "en"
    texts = _texts(language)
    provider = str(offer["provider"])
    note = _alternative_note(offer, replaced, language) if replaced is not None else None
    nodes = int(offer.get("nodes") or 1)
    per_node = int(offer.get("gpu_count") or 1)
    envs, env_comments = _envs(result, offer, texts)
    method = envs["METHOD"]
    spot = bool(offer.get("spot"))
    disk, parts = _disk(estimate, spec, int(envs["SEQ_LEN"]), bucket=spot)  # spot checkpoints go to the bucket
    interval = f"{envs['CHECKPOINT_EVERY_MINUTES']} min"
    region = offer.get("region")
    infra = f"{provider}/{region}" if region else provider  # the importer reads placeholder regions as none
    resources = Commented(
        {
            "infra": (infra, texts["infra"]),
            "accelerators": (
                f"{_accelerator_name(offer, db_path)}:{per_node}",
                texts["accelerators"].format(count=per_node, gpu=offer.get("gpu")),
            ),
            "instance_type": (offer["instance_type"], texts["instance_type"]),
            "use_spot": (spot, texts["use_spot_true" if spot else "use_spot_false"].format(interval=interval)),
            "disk_size": (disk, texts["disk_size_bucket" if spot else "disk_size"].format(**parts)),
        }
    )
    if spot:
        resources.items["job_recovery"] = ({"strategy": "FAILOVER", "max_restarts_on_errors": 3}, texts["job_recovery"])
    required = " ".join(f"--env {name}=..." for name, value in envs.items() if value is None)
    launch = f"{'sky jobs launch' if spot else 'sky launch -c gpu-advisor'} task.yaml {required}".strip()
    body: dict[str, tuple[Any, str | None]] = {
        "name": (_task_name(spec), texts["name"]),
        "resources": (
            resources,
            texts["resources_alternative" if note else "resources"].format(
                provider=provider,
                region=region or "-",
                price=_price(offer),
                snapshot=(result.get("catalog") or {}).get("snapshot_date") or "-",
            ),
        ),
        "num_nodes": (
            nodes,
            texts["num_nodes" if nodes > 1 else "num_nodes_one"].format(
                nodes=nodes, total=nodes * per_node, per_node=per_node
            ),
        ),
        "envs": (Commented({k: (v, env_comments.get(k)) for k, v in envs.items()}), texts["envs"]),
    }
    if spot:
        body["file_mounts"] = (
            {"/checkpoints": {"name": f"{_task_name(spec)}-checkpoints", "mode": "MOUNT"}},
            texts["file_mounts"],
        )
    body["setup"] = (
        _fill(prompts.load("skypilot_setup.txt"), packages=METHOD_PACKAGES[method]),
        texts["setup"].format(method=method),
    )
    body["run"] = (_run_script(method, envs["LAYOUT"], envs["PRECISION"]), texts["run"])
    job = f"{estimate.get('model_name') or spec.get('model')}, {method}, {nodes * per_node}x {offer.get('gpu')}"
    document = Commented(body)
    header = texts["header"].format(job=job, launch=launch)
    return SkyPilotTask(
        config=document.plain(),
        launch_command=launch,
        offer=offer,
        note=note,
        required_env=[name for name, value in envs.items() if value is None],
        yaml=render_yaml(document, header=f"{textwrap.fill(note, 116)}\n{header}" if note else header),
    )
