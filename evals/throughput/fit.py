"""Fit the step-time constants (tools.jobtime.micro_step.Calibration) on the TUNED rows only; held-out rows are never read.

Objective: the sum over tuned rows of log(tool / published)² on the published layout. Pattern search in log space
(each constant scaled up and down, steps halved when nothing improves). Prints the constants to paste into
tools/jobtime/micro_step.py and the tuned-split summary.

Run: python -m evals.throughput.fit
"""

from __future__ import annotations

import dataclasses
import math

import tools.jobtime.micro_step as step_time
from evals.throughput.runner import load_rows, score, summary

SCALARS = (
    "hidden_half",
    "tokens_half",
    "attention_share",
    "layer_bytes",
    "vocab_bytes",
    "lora_bytes",
    "dequant_passes",
)
CEILINGS = {"H100": ("H100", "H200"), "A100": ("A100-80GB", "A100-40GB", "A800")}
LIMITS = {
    "ceiling": (0.3, 0.95),
    "attention_share": (0.1, 2.0),
    "layer_bytes": (8.0, 80.0),
    "vocab_bytes": (4.0, 40.0),
    "lora_bytes": (1.0, 24.0),
    "dequant_passes": (0.5, 3.0),
    "hidden_half": (32.0, 4096.0),
    "tokens_half": (16.0, 16384.0),
}
"""Physical ranges, set before fitting: at least a few passes over each layer's hidden state and over fp32 logits,
at least one extra pass per adapted linear, QLoRA reading its weights at least once per matmul pass."""


def _calibration(values: dict[str, float]) -> step_time.Calibration:
    """A Calibration from the searched values."""
    ceiling = {name: values[f"ceiling_{family}"] for family, names in CEILINGS.items() for name in names}
    return dataclasses.replace(step_time.CALIBRATION, ceiling=ceiling, **{k: values[k] for k in SCALARS})


def loss(values: dict[str, float], rows: list[dict[str, str]]) -> float:
    """Sum of squared log ratios on the published layout."""
    step_time.CALIBRATION = _calibration(values)
    ratios = [s.same_ratio for s in score(rows)]
    return sum(math.log(r) ** 2 if r else 25.0 for r in ratios)


def _clamp(name: str, value: float) -> float:
    """Keep a constant in its physical range."""
    low, high = LIMITS["ceiling"] if name.startswith("ceiling") else LIMITS.get(name, (1e-3, 1e6))
    return min(max(value, low), high)


def fit(rows: list[dict[str, str]], rounds: int = 40) -> dict[str, float]:
    """Pattern search from the current constants."""
    cal = step_time.CALIBRATION
    values = {f"ceiling_{family}": cal.ceiling[names[0]] for family, names in CEILINGS.items()}
    values |= {k: float(getattr(cal, k)) for k in SCALARS}
    best = loss(values, rows)
    step = 1.6
    for _ in range(rounds):
        improved = False
        for name in list(values):
            for factor in (step, 1 / step):
                trial = values | {name: _clamp(name, values[name] * factor)}
                value = loss(trial, rows)
                if value < best - 1e-9:
                    values, best, improved = trial, value, True
        if not improved:
            step = math.sqrt(step)
            if step < 1.01:
                break
    step_time.CALIBRATION = _calibration(values)
    return values


def main() -> int:
    """Fit and print the constants and the tuned summary."""
    rows = [r for r in load_rows() if r["split"] == "tuned" and not r.get("exclude")]
    values = fit(rows)
    print(f"loss {loss(values, rows):.4f}")
    for name, value in values.items():
        print(f"{name} = {value:.4g}")
    scored = score(rows)
    print("tuned published layout:", summary([s.same_ratio for s in scored]))
    print("tuned tool layout:", summary([s.ratio for s in scored]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
