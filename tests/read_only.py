"""Run a command with one folder read-only, for real: a read-only bind mount in a private mount namespace when run
as root (root ignores file modes), else the folder's write bits removed for the duration."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_MOUNT_SCRIPT = 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@"'


def read_only_supported(probe_dir: Path) -> str | None:
    """None when `run_read_only` works here, else why not (for a skip reason)."""
    if os.geteuid() != 0:
        return None
    if not shutil.which("unshare"):
        return "running as root without unshare(1): cannot make a folder read-only"
    probe_dir.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [
            "unshare",
            "-m",
            "sh",
            "-c",
            _MOUNT_SCRIPT,
            str(probe_dir),
            "sh",
            "-c",
            f"! touch '{probe_dir}/probe' 2>/dev/null",
        ],
        capture_output=True,
        timeout=30,
    )
    if result.returncode != 0:
        return f"running as root and a read-only bind mount failed: {result.stderr.decode()[:200]}"
    return None


def run_read_only(
    folder: Path, argv: list[str], *, env: dict[str, str], timeout: float = 120, input_text: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `argv` while `folder` is read-only; returns the finished process (text output)."""
    if os.geteuid() == 0:
        command = ["unshare", "-m", "sh", "-c", _MOUNT_SCRIPT, str(folder), *argv]
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, input=input_text)
    mode = folder.stat().st_mode
    folder.chmod(0o555)
    try:
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout, input=input_text)
    finally:
        folder.chmod(mode)


def read_only_home(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """An empty data folder `tmp_path/ro` (to run commands with it read-only), its own temp dir, and an environment
    that uses them (no catalog, checkpoint or database override, no LLM); skips where read-only cannot be made."""
    reason = read_only_supported(tmp_path / "probe")
    if reason:
        from tests.shared_data import unavailable

        unavailable(reason)  # under CI=true this fails instead of skipping (issue 26)
    home = tmp_path / "ro"
    home.mkdir()
    (tmp_path / "tmp").mkdir()
    unset = (
        "GPU_ADVISOR_DB",
        "GPU_ADVISOR_DATABASE_URL",
        "GPU_ADVISOR_CHECKPOINT_PATH",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
    )
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update({"GPU_ADVISOR_HOME": str(home), "TMPDIR": str(tmp_path / "tmp"), "PYTHONPATH": str(REPO)})
    return home, env
