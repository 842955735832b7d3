"""Score the VRAM estimator against measured peak-memory figures, beside the naive bytes-per-parameter rule.

Each row belongs to a split, by source: `tuned` rows are what the estimator was built and adjusted against;
`holdout` rows come from sources kept back (see calibration/SOURCES.md) and are reported apart. An under-estimate
is an out-of-memory error for the user, so the worst one is reported beside the median and p90.

Run: python -m evals.calibrate [--csv PATH ...] [--split tuned|holdout] [--json]
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from tools.memory.estimator import EstimateRequest, estimate, resolve_arch
from tools.models.registry import lookup

CALIBRATION_DIR = Path(__file__).parent / "calibration"
OPTIMIZER_ALIASES = {"paged_adamw_32bit": "adamw", "adamw_torch": "adamw"}
NAIVE_BYTES_PER_PARAM = {"full_finetune": 16.0, "pretrain": 16.0, "lora": 2.0, "qlora": 0.5}
"""The rule common calculators use: 16 B/param for mixed-precision Adam (8 for pure 16-bit), 2 B/param for a
16-bit LoRA base, 0.5 B/param for a 4-bit QLoRA base; no activations; divided by the GPUs under ZeRO-3/FSDP."""


@dataclass(frozen=True, kw_only=True)
class Scored:
    """One calibration row with both predictions."""

    id: str
    split: str
    method: str
    metric: str
    measured_gib: float
    estimated_gib: float
    naive_gib: float

    @property
    def error(self) -> float:
        """Signed relative error of the estimator."""
        return (self.estimated_gib - self.measured_gib) / self.measured_gib

    @property
    def naive_error(self) -> float:
        """Signed relative error of the naive rule."""
        return (self.naive_gib - self.measured_gib) / self.measured_gib


def _flag(value: str) -> bool:
    """CSV truth value."""
    return value.strip().lower() in ("true", "1", "yes")


def request_for_row(row: dict[str, str]) -> EstimateRequest:
    """Build the estimator request that reproduces one calibration row's configuration."""
    model = row["model"] if lookup(row["model"]) else None
    return EstimateRequest(
        model=model,
        params_b=None if model else float(row["params_b"]),
        method=row["method"],
        precision=row["precision"] or None,
        optimizer=OPTIMIZER_ALIASES.get(row["optimizer"], row["optimizer"] or "adamw"),
        optimizer_impl=row.get("optimizer_impl") or "fused",
        qlora_upcast=_flag(row.get("qlora_upcast") or ""),
        micro_batch_size=int(row["micro_batch_size"]),
        seq_len=int(row["seq_len"]),
        gradient_checkpointing=_flag(row["gradient_checkpointing"]),
        flash_attention=_flag(row["flash_attention"]),
        lora_rank=int(row["lora_rank"] or 16),
        lora_targets=row["lora_targets"] or "all-linear",
        num_gpus=int(row["num_gpus"] or 1),
        sharding=row["sharding"] or "none",
        offload=row["offload"] or "none",
        loss=row.get("loss") or "fp32",
        **({"cuda_context_gib": float(row["context_gib"])} if row.get("context_gib") else {}),
    )


def naive_gib(row: dict[str, str], request: EstimateRequest) -> float:
    """The naive bytes-per-parameter figure for a row."""
    params = resolve_arch(request).total_params
    per_param = NAIVE_BYTES_PER_PARAM[request.method]
    if request.method in ("full_finetune", "pretrain") and request.precision in ("bf16", "fp16"):
        per_param = 8.0
    shards = request.num_gpus if request.sharding in ("zero3", "fsdp") else 1
    return params * per_param / shards / 1024**3


def score_row(row: dict[str, str]) -> Scored:
    """Estimate one row and pick the metric the row measured."""
    request = request_for_row(row)
    result = estimate(request)
    predicted = {"allocated": result.allocated_gib, "reserved": result.reserved_gib, "nvidia_smi": result.per_gpu_gib}[
        row["metric"]
    ]
    return Scored(
        id=row["id"],
        split=row.get("split") or "tuned",
        method=request.method,
        metric=row["metric"],
        measured_gib=float(row["measured_gib"]),
        estimated_gib=predicted,
        naive_gib=naive_gib(row, request),
    )


def load_rows(paths: list[Path]) -> list[dict[str, str]]:
    """Rows with a measured value from the given CSV files."""
    rows: list[dict[str, str]] = []
    for path in paths:
        with path.open(newline="", encoding="utf-8") as handle:
            rows.extend(r for r in csv.DictReader(handle) if r.get("measured_gib"))
    return rows


def _percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..1)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


def summarise(scored: list[Scored]) -> dict[str, dict[str, float | str]]:
    """Per method, per split and overall: median and p90 absolute percentage error and the worst under-estimate,
    for the estimator and the naive rule."""
    groups: dict[str, list[Scored]] = {}
    for item in scored:
        groups.setdefault(item.method, []).append(item)
    for item in scored:
        groups.setdefault(f"split:{item.split}", []).append(item)
    groups["all"] = scored
    summary: dict[str, dict[str, float | str]] = {}
    for name, items in groups.items():
        ours = [abs(i.error) * 100 for i in items]
        naive = [abs(i.naive_error) * 100 for i in items]
        worst = min(items, key=lambda i: i.error)
        summary[name] = {
            "rows": len(items),
            "median_ape": statistics.median(ours),
            "p90_ape": _percentile(ours, 0.9),
            "worst_under_pct": min(0.0, worst.error * 100),
            "worst_under_id": worst.id,
            "under_count": sum(1 for i in items if i.error < 0),
            "naive_median_ape": statistics.median(naive),
            "naive_p90_ape": _percentile(naive, 0.9),
        }
    return summary


def main(argv: list[str] | None = None) -> int:
    """Print per-row errors and the per-method and per-split summary."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--csv", action="append", type=Path, help="calibration CSV (default: all in evals/calibration)")
    parser.add_argument("--split", choices=("tuned", "holdout"), help="score one split only")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args(argv)
    paths = args.csv or sorted(CALIBRATION_DIR.glob("*.csv"))
    rows = [r for r in load_rows(paths) if not args.split or (r.get("split") or "tuned") == args.split]
    scored = [score_row(row) for row in rows]
    summary = summarise(scored)
    if args.json:
        print(
            json.dumps(
                {
                    "rows": [vars(s) | {"error": s.error, "naive_error": s.naive_error} for s in scored],
                    "summary": summary,
                },
                indent=2,
            )
        )
        return 0
    print(f"{'id':46} {'split':7} {'metric':10} {'measured':>9} {'ours':>8} {'err%':>7} {'naive':>8} {'err%':>7}")
    for s in scored:
        print(
            f"{s.id:46} {s.split:7} {s.metric:10} {s.measured_gib:9.2f} {s.estimated_gib:8.2f} {s.error * 100:7.1f} "
            f"{s.naive_gib:8.2f} {s.naive_error * 100:7.1f}"
        )
    print(
        f"\n{'group':14} {'rows':>4} {'median APE':>11} {'p90 APE':>8} {'worst under':>12} {'under':>5} | "
        f"{'naive median':>12} {'naive p90':>9}"
    )
    for name, f in summary.items():
        print(
            f"{name:14} {f['rows']:4d} {f['median_ape']:10.1f}% {f['p90_ape']:7.1f}% {f['worst_under_pct']:11.1f}% "
            f"{f['under_count']:5d} | {f['naive_median_ape']:11.1f}% {f['naive_p90_ape']:8.1f}%"
        )
    worst = summary["all"]
    print(f"\nworst under-estimate: {worst['worst_under_id']} ({worst['worst_under_pct']:.1f} %)")
    print("tuned = rows the estimator was built and adjusted against; holdout = sources kept back (SOURCES.md)")
    print("reproduce: python -m evals.calibrate")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
