"""Details of the exported SkyPilot task a user would trip over: the on-demand checkpoint folder is a real folder
under $HOME (run by bash, not a folder literally named '~'); a spot task whose checkpoints go to the bucket does
not size local disk for them; one node is said in the singular in every language."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agent.export.skypilot import build_task


def test_the_on_demand_checkpoint_folder_is_created_under_home(advisor, tmp_path: Path) -> None:
    """The run script's first lines, run by bash with the task's own CHECKPOINT_DIR, make $HOME/checkpoints."""
    task = build_task(advisor.respond("full fine-tuning of Llama 3.2 1B on 50M tokens on aws, no spot"))
    envs = task.config["envs"]
    assert not task.config["resources"]["use_spot"]
    head = "\n".join(task.config["run"].splitlines()[:3]).replace("HEAD_IP=", "# ")
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run(
        ["bash", "-c", head],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"HOME": str(home), "CHECKPOINT_DIR": str(envs["CHECKPOINT_DIR"]), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "~").exists()
    assert (home / "checkpoints").is_dir()


def test_a_spot_task_does_not_size_local_disk_for_bucket_checkpoints(advisor) -> None:
    """The same job on spot and on-demand: the spot task mounts a checkpoint bucket and its disk leaves the
    checkpoints out, so it is smaller by their size (full fine-tuning of a 1.24B model: ~35 GB for two)."""
    on_demand = build_task(advisor.respond("full fine-tuning of Llama 3.2 1B on 50M tokens on aws, no spot"))
    spot = build_task(advisor.respond("full fine-tuning of Llama 3.2 1B on 50M tokens on aws, spot is fine"))
    assert spot.config["resources"]["use_spot"] and "/checkpoints" in spot.config["file_mounts"]
    comment = on_demand.yaml.split("disk_size:")[0].rstrip().splitlines()[-1]
    checkpoints = int(comment.split(" GB checkpoints")[0].rsplit("+ ", 1)[1])  # the on-demand disk counts them
    assert checkpoints >= 2 * 1.24e9 * 14 / 1e9  # weights + Adam states, two of them
    assert f"+ {checkpoints} GB checkpoints" not in spot.yaml
    disk_comment = spot.yaml.split("disk_size:")[0].rstrip().splitlines()[-1]
    assert "bucket" in disk_comment and "checkpoint" in disk_comment, disk_comment


@pytest.mark.parametrize(
    ("language", "message", "singular"),
    [
        ("en", "LoRA on Llama 3 8B, 10k examples, on lambda", "1 node:"),
        ("it", "LoRA su Llama 3 8B, 10k esempi, su lambda", "1 nodo:"),
        ("id", "LoRA pada Llama 3 8B, 10 ribu contoh, di lambda", "1 node:"),
    ],
)
def test_one_node_is_singular(advisor, language: str, message: str, singular: str) -> None:
    """The num_nodes comment of a one-node plan."""
    task = build_task(advisor.respond(message, language=language))
    assert task.config["num_nodes"] == 1
    assert f"# {singular}" in task.yaml and "1 nodes" not in task.yaml and "1 nodi" not in task.yaml
