"""One sha256 over the ranking output of a fixed, varied set of job specs against the shipped catalog.

A speed change to the ranking (topology, memory model, costing, result shaping) must not change what it ranks: run
this before and after and compare the hash. The specs are generated deterministically (seeded): models, methods,
precisions, sequence lengths, micro-batches, checkpointing, GPU counts and wishes, budgets (USD/EUR/IDR), deadlines,
spot and providers vary; the output of each is `rank_offers(spec).model_dump(mode="json")`, serialised with sorted
keys. Also prints the wall time of the whole run (not comparable across machines; for orientation only).

Run: .venv/bin/python benchmarks/ranking_fingerprint.py [--specs 1200] [--show 3]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import tempfile
import time
from pathlib import Path

from contract.jobspec import JobSpec
from tools.catalog import ensure_db
from tools.ranking import rank_offers

MODELS = [
    "llama-3.1-8b",
    "llama-3-70b",
    "llama-3.2-1b",
    "llama-3.2-3b",
    "mistral-7b",
    "qwen2.5-14b",
    "qwen2.5-0.5b",
    "qwen3-30b-a3b",
    "gemma-2-9b",
    "phi-4",
    "mixtral-8x7b",
    "gpt2",
    "gpt2-xl",
    "llama-3.1-405b",
    "deepseek-r1-distill-qwen-7b",
    "gpt-oss-20b",
    "bert-base",
    "qwen2.5-72b",
]
METHODS = ["full_finetune", "lora", "qlora", "pretrain", None]
PRECISIONS = [None, None, "bf16", "amp_bf16", "fp16", "fp32"]
SEQ_LENS = [None, 512, 1024, 2048, 4096, 8192, 3000, 16384]
GPUS = [None, None, None, "H100", "A100-80GB", "L4", "RTX4090", "H200", "A10G", "L40S"]
PROVIDERS = [None, None, None, ["lambda"], ["runpod", "vast"], ["aws"]]


def specs(count: int, seed: int = 27) -> list[JobSpec]:
    """`count` varied job specs, the same ones on every run."""
    rng = random.Random(seed)
    out = []
    for index in range(count):
        fields: dict = {
            "language": rng.choice(["it", "id", "en"]),
            "model": rng.choice(MODELS),
            "method": rng.choice(METHODS),
            "precision": rng.choice(PRECISIONS),
            "seq_len": rng.choice(SEQ_LENS),
            "gpu": rng.choice(GPUS),
            "providers": rng.choice(PROVIDERS),
        }
        if rng.random() < 0.3:
            fields["micro_batch_size"] = rng.choice([1, 2, 4, 8, 16])
        if rng.random() < 0.2:
            fields["gradient_checkpointing"] = rng.random() < 0.5
        if rng.random() < 0.3:
            fields["num_gpus"] = rng.choice([1, 2, 4, 8, 16, 32])
        if rng.random() < 0.5:
            fields["dataset_tokens"] = rng.choice([10, 50, 200, 1000, 10_000]) * 1_000_000
        elif rng.random() < 0.5:
            fields["dataset_examples"] = rng.randint(1, 200) * 1000
        if rng.random() < 0.3:
            fields["epochs"] = rng.choice([1, 2, 3, 0.5])
        if rng.random() < 0.6:
            currency = rng.choice(["USD", "EUR", "IDR"])
            amount = rng.choice([20, 50, 100, 300, 1000, 5000]) * (16_000 if currency == "IDR" else 1)
            fields["budget"] = {"amount": amount, "currency": currency}
        if rng.random() < 0.4:
            fields["deadline_hours"] = rng.choice([2, 6, 12, 24, 48, 168])
        if rng.random() < 0.6:
            fields["interruptible_ok"] = rng.random() < 0.5
        if index % 7 == 0:  # a model-less job sized by parameters
            fields.pop("model")
            fields["params_b"] = rng.choice([0.35, 1.3, 6.7, 13, 33])
        out.append(JobSpec(**{k: v for k, v in fields.items() if v is not None}))
    return out


def fingerprint(job_specs: list[JobSpec], db_path: Path) -> tuple[str, int]:
    """sha256 over the canonical JSON of every ranking (or its error), and how many raised ValueError."""
    digest, errors = hashlib.sha256(), 0
    for spec in job_specs:
        try:
            out = rank_offers(spec, db_path=db_path).model_dump(mode="json")
        except ValueError as error:
            out, errors = {"error": str(error)}, errors + 1
        digest.update(json.dumps(out, sort_keys=True, separators=(",", ":")).encode())
        digest.update(b"\n")
    return digest.hexdigest(), errors


def main() -> None:
    """Print the hash, the error count and the run's wall time."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", type=int, default=1200, help="job specs to rank (>= 1000 for the check)")
    args = parser.parse_args()
    db_path = ensure_db(Path(tempfile.mkdtemp(prefix="gpu-advisor-fingerprint-")) / "catalog.sqlite")
    job_specs = specs(args.specs)
    start = time.perf_counter()
    digest, errors = fingerprint(job_specs, db_path)
    print(
        f"ranking fingerprint over {len(job_specs)} specs: sha256 {digest} ({errors} raised ValueError; "
        f"{time.perf_counter() - start:.1f} s wall)"
    )
    print(f"reproduce: .venv/bin/python benchmarks/ranking_fingerprint.py --specs {args.specs}")


if __name__ == "__main__":
    main()
