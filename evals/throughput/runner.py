"""Score the throughput model against published training throughput (tokens/s per GPU).

Each row of published.csv is one published run (source repository, commit, file and table in the row). Rows are
split by source before any tuning: `tuned` sources are what the model's constants were fitted on, `holdout` sources
are only scored. Two predictions per row: on the layout the tool itself picks for the stated job and GPUs, and on the
layout the published run used (fit ignored). Ratio = tool / published; the worst row is the one farthest from 1 in
log terms.

Run: python -m evals.throughput [--split tuned|holdout] [--json]
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import statistics
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from tools.jobtime.collectives import Plan
from tools.jobtime.topology import Candidate, LayoutOption, check_topology, evaluate_plan
from tools.jobtime.workload import Workload, workload_for_request
from tools.memory.estimator import EstimateRequest

DATA = Path(__file__).parent / "published.csv"
MPT_SHAPES = {
    "125m": (768, 12, 12),
    "350m": (1024, 16, 24),
    "760m": (1536, 12, 24),
    "1b": (2048, 16, 24),
    "3b": (2560, 20, 32),
    "7b": (4096, 32, 32),
    "13b": (5120, 40, 40),
    "30b": (7168, 56, 48),
    "70b": (8192, 64, 80),
}
"""d_model, n_heads, n_layers from llm-foundry scripts/train/yamls/pretrain/mpt-<size>.yaml (expansion ratio 4,
vocab 50368, learned positions: the parameter counts in the benchmark table match this shape exactly)."""
MPT_VOCAB = 50368
BAND = (0.67, 1.5)
_CONFIGS = tempfile.TemporaryDirectory(prefix="gpu-advisor-throughput-")
"""MPT config files for this process (workloads keep their path for later memory estimates)."""
_WORKLOADS: dict[tuple[str, bool], Workload] = {}
SXM_GPUS = ("H100", "A100-80GB", "A100-40GB")


@dataclass(frozen=True, kw_only=True)
class Scored:
    """One published row with the tool's predictions."""

    id: str
    split: str
    gpu: str
    gpus: int
    model: str
    method: str
    published: float
    tool_layout: str
    tool: float | None
    same_layout: float | None

    @property
    def ratio(self) -> float | None:
        """Tool (own layout) / published tokens/s per GPU."""
        return None if self.tool is None else self.tool / self.published

    @property
    def same_ratio(self) -> float | None:
        """Tool on the published layout / published."""
        return None if self.same_layout is None else self.same_layout / self.published


def load_rows(path: Path = DATA) -> list[dict[str, str]]:
    """The published rows."""
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def _config_for(model: str, seq_len: int, folder: Path) -> str:
    """A GPT-2-style config.json reproducing an MPT model (tied head, GELU 4x MLP, learned positions)."""
    d_model, heads, layers = MPT_SHAPES[model.removeprefix("mpt-")]
    path = folder / f"{model}-{seq_len}.json"
    path.write_text(
        json.dumps(
            {
                "model_type": "gpt2",
                "n_embd": d_model,
                "n_head": heads,
                "n_layer": layers,
                "vocab_size": MPT_VOCAB,
                "n_positions": seq_len,
            }
        )
    )
    return str(path)


def request_for(row: dict[str, str], folder: Path, checkpointing: bool) -> EstimateRequest:
    """The estimator request that states the published run's job."""
    fields: dict[str, object] = {
        "method": row["method"],
        "precision": row["precision"],
        "micro_batch_size": int(row["micro_batch"]),
        "seq_len": int(row["seq_len"]),
        "gradient_checkpointing": checkpointing,
        "num_gpus": 1,
    }
    if row["model"].startswith("mpt-"):
        fields["config_path"] = _config_for(row["model"], int(row["seq_len"]), folder)
    else:
        fields["model"] = row["model"]
    if row["lora_rank"]:
        fields["lora_rank"] = int(row["lora_rank"])
    if row["lora_targets"]:
        fields["lora_targets"] = row["lora_targets"]
    return EstimateRequest(**fields)


def candidate_for(row: dict[str, str]) -> Candidate:
    """The GPUs the published run used."""
    gpus, per_node = int(row["gpus"]), int(row["gpus_per_node"])
    return Candidate(
        gpu=row["gpu"],
        gpu_count=gpus,
        gpus_per_node=per_node,
        interconnect="nvlink" if row["gpu"] in SXM_GPUS and per_node > 1 else "unknown",
        inter_node_gbps=float(row["inter_node_gbps"]) if row["inter_node_gbps"] else None,
    )


def tokens_per_gpu(option: LayoutOption, workload: Workload, step_s: float | None = None) -> float | None:
    """Tokens/s per GPU of one layout: micro-batch × sequence per replica per step, over its TP group."""
    step = step_s if step_s is not None else (option.compute_s or 0.0) + option.exposed_comm_s
    if not option.compute_s or step <= 0:
        return None
    micro = getattr(option, "micro_batch_size", None) or workload.micro_batch_size
    return micro * workload.seq_len / (option.tensor_parallel * step)


def _step(option: LayoutOption) -> float:
    """Seconds per micro-step."""
    return (option.compute_s or 0.0) + option.exposed_comm_s


def _predict(row: dict[str, str], folder: Path) -> tuple[str, float | None, float | None]:
    """(tool's layout, tokens/s per GPU on it, tokens/s per GPU on the published layout)."""
    selective = row["checkpointing"] == "selective"
    checkpointing = row["checkpointing"] in ("true", "selective")
    workload = _workload(row, folder, checkpointing)
    plain = _workload(row, folder, False) if selective else None
    candidate = candidate_for(row)
    result = check_topology(workload, candidate)
    tool, layout = None, "does not fit"
    if result.runnable and result.layout is not None:
        best = next(
            o
            for o in result.options
            if o.fits
            and o.layout == result.layout
            and o.tensor_parallel == result.tensor_parallel
            and o.micro_batch_size == result.micro_batch_size
            and o.gradient_checkpointing == result.gradient_checkpointing
        )
        layout = (
            result.layout.replace("tensor_parallel", "tp")
            + (f"{best.tensor_parallel}" if best.tensor_parallel > 1 else "")
            + (f" mb{best.micro_batch_size}" if best.micro_batch_size != workload.micro_batch_size else "")
        )
        tool = _blend(best, workload, plain, candidate)
    plan = Plan(
        layout=row["layout"],
        sharding={"fsdp": "fsdp", "hsdp": "fsdp", "zero2": "zero2", "ddp": "ddp", "single_gpu": "none"}[row["layout"]],
        tp=1,
    )
    same_options = evaluate_plan(workload, candidate, plan)
    same = _blend(same_options[0], workload, plain, candidate) if same_options else None
    return layout, tool, same


def _workload(row: dict[str, str], folder: Path, checkpointing: bool) -> Workload:
    """The row's workload (memoised per process: the fit scores the rows many times)."""
    key = (row["id"], checkpointing)
    if key not in _WORKLOADS:
        _WORKLOADS[key] = workload_for_request(request_for(row, folder, checkpointing))
    return _WORKLOADS[key]


def _blend(option: LayoutOption, workload: Workload, plain: Workload | None, candidate: Candidate) -> float | None:
    """Tokens/s per GPU; selective checkpointing (some layers recomputed) is timed halfway between on and off."""
    if plain is None:
        return tokens_per_gpu(option, workload)
    plan = Plan(layout=option.layout, sharding=option.sharding, tp=option.tensor_parallel)
    off = [o for o in evaluate_plan(plain, candidate, plan) if o.micro_batch_size == option.micro_batch_size]
    if not off:
        return tokens_per_gpu(option, workload)
    return tokens_per_gpu(option, workload, (_step(option) + _step(off[0])) / 2)


def score(rows: list[dict[str, str]]) -> list[Scored]:
    """Predict every row."""
    scored = []
    for row in rows:
        layout, tool, same = _predict(row, Path(_CONFIGS.name))
        published = float(row["published"]) / (int(row["gpus"]) if row["published_unit"] == "tokens_s_total" else 1)
        scored.append(
            Scored(
                id=row["id"],
                split=row["split"],
                gpu=row["gpu"],
                gpus=int(row["gpus"]),
                model=row["model"],
                method=row["method"],
                published=published,
                tool_layout=layout,
                tool=tool,
                same_layout=same,
            )
        )
    return scored


def summary(values: list[float | None]) -> dict[str, float | int | None]:
    """Median, worst (farthest from 1 in log terms), rows outside the band, rows without a prediction."""
    known = [v for v in values if v is not None]
    if not known:
        return {"rows": len(values), "median": None, "worst": None, "outside_band": 0, "missing": len(values)}
    worst = max(known, key=lambda v: abs(math.log(v)))
    return {
        "rows": len(values),
        "median": round(statistics.median(known), 3),
        "worst": round(worst, 3),
        "outside_band": sum(1 for v in known if not BAND[0] <= v <= BAND[1]),
        "missing": len(values) - len(known),
    }


def _fmt(value: float | None, digits: int = 2) -> str:
    """A number or a dash."""
    return "-" if value is None else f"{value:.{digits}f}"


def main(argv: list[str] | None = None) -> int:
    """Print the per-row table and the split summaries."""
    parser = argparse.ArgumentParser(prog="python -m evals.throughput")
    parser.add_argument("--split", choices=("tuned", "holdout"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = [r for r in load_rows() if args.split in (None, r["split"]) and not r.get("exclude")]
    scored = score(rows)
    splits = sorted({s.split for s in scored}, reverse=True)
    summaries = {
        split: {
            "tool_layout": summary([s.ratio for s in scored if s.split == split]),
            "published_layout": summary([s.same_ratio for s in scored if s.split == split]),
        }
        for split in splits
    }
    if args.json:
        print(
            json.dumps(
                {
                    "rows": [asdict(s) | {"ratio": s.ratio, "same_ratio": s.same_ratio} for s in scored],
                    "summary": summaries,
                },
                indent=1,
            )
        )
        return 0
    print(
        f"{'row':44} {'split':7} {'published':>10} {'tool layout':>14} {'tool':>9} {'ratio':>6} "
        f"{'same':>9} {'ratio':>6}"
    )
    for s in scored:
        print(
            f"{s.id:44} {s.split:7} {s.published:10.0f} {s.tool_layout:>14} {_fmt(s.tool, 0):>9} "
            f"{_fmt(s.ratio):>6} {_fmt(s.same_layout, 0):>9} {_fmt(s.same_ratio):>6}"
        )
    print()
    for split, parts in summaries.items():
        for mode, stats in parts.items():
            print(
                f"{split:8} {mode:17} rows {stats['rows']:3}  median {_fmt(stats['median'], 3)}  worst "
                f"{_fmt(stats['worst'], 3)}  outside {BAND[0]}-{BAND[1]}: {stats['outside_band']}  "
                f"no prediction: {stats['missing']}"
            )
    print(
        "ratio = tool / published tokens/s per GPU; tool = the layout the tool picks, same = the published "
        "layout\nreproduce: python -m evals.throughput"
    )
    return 0
