"""The `throughput` block of `gpu-advisor estimate --gpu G --gpus N --json` and of the estimate tool."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent.toolbox import call_tool

SCRIPT = shutil.which("gpu-advisor", path=str(Path(sys.executable).parent)) or "gpu-advisor"


def _n_matmul_llama_3_2_1b() -> float:
    """Llama 3.2 1B matmul parameters by hand: 16 layers × (q, o 2048² + k, v 2048×512 + MLP 3×2048×8192) + the
    tied 128256×2048 head."""
    per_layer = 2 * 2048 * 2048 + 2 * 2048 * 512 + 3 * 2048 * 8192
    return 16 * per_layer + 128256 * 2048


def test_cli_json_has_the_throughput_block() -> None:
    """Layout, tokens/s per GPU, step time, MFU and communication share, consistent with each other."""
    done = subprocess.run(
        [SCRIPT, "estimate", "--model", "llama-3.2-1b", "--gpu", "H100", "--gpus", "8", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    block = json.loads(done.stdout)["throughput"]
    assert block["layout"] in ("ddp", "zero2", "fsdp") and block["gpus"] == 8
    assert block["tokens_per_s"] == pytest.approx(8 * block["tokens_per_s_per_gpu"], rel=1e-3)
    tokens = block["micro_batch_size"] * 2048
    assert block["tokens_per_s_per_gpu"] * block["step_time_s"] * block["tensor_parallel"] == pytest.approx(
        tokens, rel=2e-3
    )
    n, attention = _n_matmul_llama_3_2_1b(), 12 * 16 * 2048 * 2048
    assert block["mfu"] == pytest.approx(block["tokens_per_s_per_gpu"] * (6 * n + attention) / 989e12, rel=0.01)
    assert block["gradient_checkpointing"] is True  # the estimate's default; the block times the same run
    assert block["hfu"] / block["mfu"] == pytest.approx((8 * n + attention * 4 / 3) / (6 * n + attention), rel=0.01)
    assert 0 <= block["comm_share"] < 0.25
    assert set(block["sources"]) >= {"layout", "tokens_per_s_per_gpu", "comm_share", "mfu"}


def test_estimate_tool_adds_the_block_only_with_a_gpu() -> None:
    """Over the tool registry (MCP/HTTP/CLI tool): a GPU named gives the block; no GPU, no block."""
    with_gpu = call_tool("estimate", {"model": "llama-3.2-1b", "method": "lora", "gpu": "A100-80GB", "num_gpus": 2})
    assert with_gpu.throughput is not None and with_gpu.throughput.layout == "ddp"
    without = call_tool("estimate", {"model": "llama-3.2-1b", "method": "lora"})
    assert getattr(without, "throughput", None) is None


def test_a_job_that_fits_nowhere_says_so_without_numbers() -> None:
    """Full fine-tuning of a 70B on one 80 GB GPU: no layout, no speed."""
    result = call_tool("estimate", {"model": "llama-3.1-70b", "gpu": "H100", "num_gpus": 1})
    assert result.throughput.runnable is False and result.throughput.tokens_per_s_per_gpu is None
