"""evals/measure_gpu.py --dry-run must work without torch/transformers/peft and list its plan."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "evals" / "measure_gpu.py"


def test_dry_run_lists_configs_and_exits_zero():
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--dry-run"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "planned configurations" in out
    config_lines = [line for line in out.splitlines() if line.strip().startswith("h200-")]
    assert len(config_lines) >= 20
    for needle in (
        "llama3.2-1b",
        "llama3.2-3b",
        "llama3.1-8b",
        "lora16-qv",
        "lora16-alllin",
        "amp_bf16",
        "gcon",
        "gcoff",
        "mb4",
        "s4096",
    ):
        assert needle in out, needle
    # parameter counts from memory-formulas.md section 4
    assert "1,235,814,400" in out and "3,212,749,824" in out and "8,030,261,248" in out


def test_dry_run_does_not_import_torch():
    # Block the heavy imports: the dry-run path must not touch them.
    code = (
        "import sys, runpy\n"
        "for m in ('torch', 'transformers', 'peft'):\n"
        "    sys.modules[m] = None\n"
        f"sys.argv = [{str(SCRIPT)!r}, '--dry-run', '--only', '8b']\n"
        f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "llama3.1-8b" in proc.stdout and "llama3.2-1b" not in proc.stdout


def test_plan_measures_fused_and_foreach_adamw_twins():
    """Issue 10: the fused default and torch's foreach AdamW are measured on the same jobs, rows marked holdout."""
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--dry-run", "--only", "1b"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    rows = {
        line.split()[0]: dict(field.split("=", 1) for field in line.split()[1:] if "=" in field)
        for line in proc.stdout.splitlines()
        if line.strip().startswith("h200-")
    }
    foreach = [slug for slug in rows if slug.endswith("-foreach")]
    assert foreach and "h200-llama3.2-1b-full-amp_bf16-mb1-s1024-gcon" in rows
    for slug in foreach:  # each twin is the same job with the other AdamW implementation
        twin = rows[slug.removesuffix("-foreach")]
        assert rows[slug]["adamw"] == "foreach" and twin["adamw"] == "fused"
        assert {k: v for k, v in rows[slug].items() if k != "adamw"} == {k: v for k, v in twin.items() if k != "adamw"}
    # the CSV it writes has the columns the calibration reads (split, optimizer_impl): the header, not a source grep
    import csv
    import io
    import runpy

    columns = runpy.run_path(str(SCRIPT))["COLUMNS"]
    calibration = next((ROOT / "evals" / "calibration").glob("*.csv"))
    header = next(csv.reader(io.StringIO(calibration.read_text(encoding="utf-8"))))
    assert {"split", "optimizer_impl"} <= set(columns) <= set(header)
