"""The throughput eval set and its held-out score (issue 24's bar), graded against the published numbers."""

from __future__ import annotations

import math
import statistics

from evals.throughput.runner import load_rows, score

ROWS = load_rows()


def test_set_has_thirty_sourced_rows_split_by_source() -> None:
    """At least 30 rows, each with repository, commit, file and table; no source in both splits; both splits
    cover more than one GPU."""
    used = [r for r in ROWS if not r["exclude"]]
    assert len(used) >= 30
    for row in ROWS:
        assert row["source_repo"] and row["source_file"] and row["source_table"] and len(row["source_commit"]) == 40
        assert float(row["published"]) > 0
    tuned = {r["source_repo"] for r in used if r["split"] == "tuned"}
    held = {r["source_repo"] for r in used if r["split"] == "holdout"}
    assert tuned and held and not tuned & held
    for split in ("tuned", "holdout"):
        assert len({r["gpu"] for r in used if r["split"] == split}) >= 2


def test_whole_run_throughput_is_divided_by_the_gpu_count() -> None:
    """VectorLM reports tokens/s over all GPUs: the 4-GPU LoRA row at 2048 is 14299.47 / 4 per GPU."""
    row = next(r for r in ROWS if r["id"] == "vectorlm-8b-lora-4xa100-s2048")
    scored = score([row])[0]
    assert scored.published == 14299.47 / 4


def test_held_out_median_and_band() -> None:
    """Held-out sources: median tool/published in 0.9-1.1 and every row within 0.67-1.5 on the published layout,
    and on the tool's own layout wherever it gives one."""
    held = score([r for r in ROWS if r["split"] == "holdout" and not r["exclude"]])
    same = [s.same_layout / s.published for s in held]
    own = [s.tool / s.published for s in held if s.tool is not None]
    for ratios in (same, own):
        assert 0.9 <= statistics.median(ratios) <= 1.1
        assert all(0.67 <= r <= 1.5 for r in ratios), max(ratios, key=lambda r: abs(math.log(r)))
