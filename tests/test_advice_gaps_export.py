"""Issue 24: the exported SkyPilot task carries exactly the settings the price was computed with. Every env of
every exported task is compared with the turn it came from (its estimate, its spec, the headline's layout and
settings); the estimator, run on the exported settings, gives the headline's per-GPU memory; accumulation steps
are recomputed by hand from the global batch (128 sequences fine-tuning, 2^20 tokens pre-training) over the
data-parallel replicas."""

from __future__ import annotations

import math
from typing import Any

import pytest

from agent.export.skypilot import build_task
from agent.service import Advisor
from tools.memory.estimator import EstimateRequest, estimate

JOBS = [
    "full fine-tuning of Llama 3.1 8B on 200M tokens, no spot instances",  # checkpointing left open: off if it fits
    "full fine-tuning of Llama 3.1 8B on 200M tokens with gradient checkpointing, micro-batch 2, on aws",
    "LoRA on Llama 3 8B, 10k examples, spot is fine",
    "QLoRA su Llama 3 70B, 20k esempi, niente spot",
    "pretrain a 7B model on 300B tokens in 10 days on aws, spot ok",
    "full fine-tuning of Qwen2.5-7B on 4x H100, micro-batch 8, no gradient checkpointing",
]


@pytest.fixture(scope="module")
def turns(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """Real offline turns with a recommended offer on a SkyPilot cloud."""
    home = tmp_path_factory.mktemp("export-gaps")
    advisor = Advisor(checkpoint_path=home / "threads.sqlite", db_path=home / "catalog.sqlite")
    try:
        results = [advisor.respond(text) for text in JOBS]
    finally:
        advisor.close()
    return [r for r in results if r["offers"]]


def _accumulation(method: str, micro: int, seq_len: int, replicas: int) -> int:
    """Micro-steps per optimizer step for the global batch, by hand."""
    sequences = 1_048_576 / seq_len if method == "pretrain" else 128
    return max(1, math.ceil(sequences / (micro * replicas) - 1e-9))


def _expected(turn: dict[str, Any]) -> dict[str, Any]:
    """Each env the task must carry, from the turn itself (spec, estimate, headline), not from the exporter."""
    spec, estimate, top = turn["spec"], turn["estimate"], turn["offers"][0]
    stated, seq_len = spec.get("micro_batch_size") or 1, spec.get("seq_len") or 2048
    micro = top["settings"]["micro_batch_size"]  # a layout may lower the stated micro-batch to fit; never raise it
    assert micro <= stated
    if micro < stated:
        assert any(r["code"] == "micro_batch_lowered" for r in top["reasons"])
    tp = top["settings"].get("tensor_parallel") or 1
    checkpointing = top["settings"]["gradient_checkpointing"]
    if top["total_gpus"] == 1 or top["layout"] == turn["topology"]["layout"]:
        assert checkpointing == estimate["gradient_checkpointing"]  # the turn's estimate is for the same run
    if spec.get("gradient_checkpointing") is not None:
        assert checkpointing == spec["gradient_checkpointing"]  # what the user said is what was priced
    accumulation = _accumulation(estimate["method"], micro, seq_len, top["total_gpus"] // tp)  # DP replicas
    expected = {
        "METHOD": estimate["method"],
        "PRECISION": estimate["precision"],
        "MICRO_BATCH_SIZE": micro,
        "SEQ_LEN": seq_len,
        "GRADIENT_CHECKPOINTING": "true" if checkpointing else "false",
        "LAYOUT": top["layout"],
        "GRADIENT_ACCUMULATION_STEPS": accumulation,
    }
    if tp > 1:
        expected["TENSOR_PARALLEL"] = tp
    if estimate["method"] in ("lora", "qlora"):
        expected["LORA_RANK"] = 16
    return expected


RUN_ENVS = {"MODEL_ID", "DATASET", "CHECKPOINT_EVERY_MINUTES", "SAVE_STEPS", "CHECKPOINT_DIR"}
"""Envs about the run itself (repo, data, checkpoints), not the training settings the price depends on."""


def test_every_exported_env_matches_the_turn(turns: list[dict[str, Any]]) -> None:
    """No training setting is exported that the price did not use, and none is missing."""
    assert len(turns) >= 5
    for turn in turns:
        envs = build_task(turn).config["envs"]
        expected = _expected(turn)
        assert set(envs) - RUN_ENVS == set(expected), (turn["spec"], envs)
        for name, value in expected.items():
            assert envs[name] == value, (name, turn["spec"], envs)


SHARDING = {"single_gpu": "none", "ddp": "ddp", "zero2": "zero2", "fsdp": "fsdp", "hsdp": "fsdp"}


def test_exported_settings_reproduce_the_priced_memory(turns: list[dict[str, Any]]) -> None:
    """The estimator, given the exported method, micro-batch, sequence length, checkpointing and layout, returns
    the per-GPU memory the headline was priced with (HSDP shards within one node)."""
    for turn in turns:
        envs, top = build_task(turn).config["envs"], turn["offers"][0]
        tp = int(envs.get("TENSOR_PARALLEL", 1))
        layout = envs["LAYOUT"]
        gpus = top["gpu_count"] if layout == "hsdp" else top["total_gpus"]
        sharding = SHARDING.get(layout, "ddp" if top["nodes"] > 1 else "none")
        request = EstimateRequest(
            model=turn["spec"].get("model"),
            params_b=turn["spec"].get("params_b"),
            method=envs["METHOD"],
            micro_batch_size=envs["MICRO_BATCH_SIZE"],
            seq_len=envs["SEQ_LEN"],
            gradient_checkpointing=envs["GRADIENT_CHECKPOINTING"] == "true",
            num_gpus=gpus,
            sharding=sharding,
            tensor_parallel=tp,
        )
        assert estimate(request).per_gpu_gib == pytest.approx(top["per_gpu_gib"], abs=0.01), (turn["spec"], envs)


def test_checkpointing_left_open_is_exported_as_priced(turns: list[dict[str, Any]]) -> None:
    """The issue's case: checkpointing not given, the layout dropped it (memory allows), the task must not turn it
    back on (the run would pay ~1/3 more compute the price did not include)."""
    open_case = turns[0]
    assert open_case["spec"]["gradient_checkpointing"] is None
    assert open_case["estimate"]["gradient_checkpointing"] is False
    assert build_task(open_case).config["envs"]["GRADIENT_CHECKPOINTING"] == "false"


def test_the_turns_estimate_is_the_headlines_priced_run(turns: list[dict[str, Any]]) -> None:
    """The memory breakdown the answer shows is the run the headline was priced with: same checkpointing, same
    micro-batch, and the same per-GPU memory as the headline's layout (no guessing which run it was)."""
    for turn in turns:
        estimate_, top = turn["estimate"], turn["offers"][0]
        assert estimate_["gradient_checkpointing"] == top["settings"]["gradient_checkpointing"], turn["spec"]
        assert estimate_["per_gpu_gib"] == pytest.approx(top["per_gpu_gib"], abs=0.01), (turn["spec"], top["layout"])
