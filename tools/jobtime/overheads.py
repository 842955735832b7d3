"""Wall-clock time a job spends outside training steps: instance start, container image and model download, dataset
staging, and checkpoint writes. Planning defaults, each stated with the result (no sourced per-provider table)."""

from __future__ import annotations

import math
from typing import NamedTuple

INSTANCE_START_S = 300.0
"""GPU instance from request to SSH/health check: 5 minutes (planning assumption; clouds quote 1-10 minutes)."""
IMAGE_BYTES = 10e9
"""A PyTorch + CUDA training image: ~10 GB to pull (planning assumption)."""
DOWNLOAD_GBS = 0.25
"""Model, image and dataset download speed: 0.25 GB/s (2 Gb/s) from a hub or bucket (planning assumption)."""
DATASET_BYTES_PER_TOKEN = 2.0
"""Tokenised data on disk: uint16 token ids, 2 bytes per token (one epoch is staged)."""
CHECKPOINT_EVERY_HOURS = 1.0
"""Periodic checkpoints once an hour on on-demand runs (the seed article's 'frequent checkpoints'), plus the final
save; spot runs use the spot model's own interval."""
CHECKPOINT_WRITE_GBS = 1.0
"""Checkpoint write speed per node to persistent storage, GB/s (planning assumption, as in the spot model)."""


class Overheads(NamedTuple):
    """Seconds outside training steps, by item (a named tuple: the ranking makes one per shape and job)."""

    start_s: float
    download_s: float
    staging_s: float
    checkpoint_s: float

    @property
    def setup_s(self) -> float:
        """Time before the first training step."""
        return self.start_s + self.download_s + self.staging_s

    @property
    def total_s(self) -> float:
        """All of it."""
        return self.setup_s + self.checkpoint_s

    def as_hours(self) -> dict[str, float]:
        """Each item in hours (for the ranked offer)."""
        return {
            "instance_start": self.start_s / 3600,
            "downloads": self.download_s / 3600,
            "dataset_staging": self.staging_s / 3600,
            "checkpoint_writes": self.checkpoint_s / 3600,
        }


def checkpoint_bytes(total_params: int, trainable_params: int, adapters: bool) -> float:
    """Bytes of one resumable checkpoint: BF16 weights (adapters only when the base is frozen) + FP32 AdamW state
    and master weights of the trainable parameters."""
    weights = (trainable_params if adapters else total_params) * 2.0
    return weights + trainable_params * 12.0


def job_overheads(
    *,
    train_hours: float,
    total_params: int,
    trainable_params: int,
    method: str,
    dataset_tokens_per_epoch: float,
    nodes: int,
    periodic_checkpoints: bool,
) -> Overheads:
    """Overheads of one run: nodes start and download in parallel; each node writes its share of a checkpoint."""
    if train_hours < 0 or nodes < 1:
        raise ValueError("train_hours must be >= 0 and nodes >= 1")
    pretrained = method != "pretrain"
    model_bytes = total_params * 2.0 if pretrained else 0.0
    download = (IMAGE_BYTES + model_bytes) / (DOWNLOAD_GBS * 1e9)
    staging = dataset_tokens_per_epoch * DATASET_BYTES_PER_TOKEN / nodes / (DOWNLOAD_GBS * 1e9)
    writes = 1 + (math.floor(train_hours / CHECKPOINT_EVERY_HOURS) if periodic_checkpoints else 0)
    one = checkpoint_bytes(total_params, trainable_params, method in ("lora", "qlora")) / nodes
    return Overheads(INSTANCE_START_S, download, staging, writes * one / (CHECKPOINT_WRITE_GBS * 1e9))


def overhead_assumptions() -> list[str]:
    """The defaults above as sentences for the result's assumptions."""
    return [
        f"instance start {INSTANCE_START_S / 60:g} min; image {IMAGE_BYTES / 1e9:g} GB, model weights and the "
        f"tokenised dataset ({DATASET_BYTES_PER_TOKEN:g} bytes/token, one epoch) downloaded at "
        f"{DOWNLOAD_GBS:g} GB/s",
        f"checkpoints every {CHECKPOINT_EVERY_HOURS:g} h on on-demand runs plus the final save, written at "
        f"{CHECKPOINT_WRITE_GBS:g} GB/s per node",
        "the provider's minimum billing applies to the whole run, setup included",
    ]
