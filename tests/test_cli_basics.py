"""What people expect of any CLI: --version, shell completion, one-line errors, every command listed in --help."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cli.app import command_modules, main

ROOT = Path(__file__).resolve().parent.parent
EXE = Path(sys.executable).with_name("gpu-advisor")


def test_version_prints_the_distribution_version(capsys) -> None:
    """`--version` prints the version from the installed metadata and exits 0."""
    from importlib.metadata import version

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"gpu-advisor {version('gpu-advisor')}"


def test_every_command_module_is_registered(capsys) -> None:
    """Each module in cli/commands/ adds a command that --help lists (discovery, not a hand-kept list)."""
    modules = command_modules()
    assert "cli.commands.recommend" in modules and len(modules) >= 8
    assert main(["--help"]) == 0
    listed = capsys.readouterr().out
    for name in ("recommend", "chat", "estimate", "catalog", "serve", "ask"):
        assert f" {name} " in listed


def test_shell_completion_completes_command_names() -> None:
    """Bash completion (as installed by --install-completion) completes a command prefix."""
    env = {
        **os.environ,
        "COMP_WORDS": "gpu-advisor recomm",
        "COMP_CWORD": "1",
        "_GPU_ADVISOR_COMPLETE": "complete_bash",
    }
    done = subprocess.run([str(EXE)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout.split() == ["recommend"]


def test_unknown_option_is_one_line_on_stderr(capsys) -> None:
    """A usage mistake is one line on stderr with exit status 2, never a traceback."""
    assert main(["estimate", "--no-such-option"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error:") and "Traceback" not in err


def test_an_unsupported_language_stops_chat_and_recommend_before_any_turn(tmp_path: Path) -> None:
    """`chat --lang xx` (and `recommend --lang xx`): one line on stderr, exit 2, nothing on stdout, no turn run."""
    env = {**os.environ, "GPU_ADVISOR_HOME": str(tmp_path)}
    for args, stdin in (
        (["chat", "--lang", "xx"], "LoRA on Llama 3 8B\nand with QLoRA?\n"),
        (["recommend", "LoRA on Llama 3 8B", "--lang", "xx"], ""),
    ):
        done = subprocess.run([str(EXE), *args], input=stdin, capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 2, (args, done.returncode, done.stdout, done.stderr)
        assert done.stdout == ""
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "xx" in lines[0] and "it, id" in lines[0], done.stderr


def test_help_fits_80_columns_with_whole_flag_names(tmp_path: Path) -> None:
    """Every command's --help at 80 columns: no line over 80, no flag name cut ('…'), no '<bool>' on flags."""
    env = {**os.environ, "COLUMNS": "80", "GPU_ADVISOR_HOME": str(tmp_path)}
    names = ["", *sorted(m.rsplit(".", 1)[1] for m in command_modules())]
    for name in names:
        args = [name, "--help"] if name else ["--help"]
        done = subprocess.run([str(EXE), *args], capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0, (name, done.stderr)
        for line in done.stdout.splitlines():
            assert len(line) <= 80 and "…" not in line and "<bool>" not in line, (name, line)
    estimate = subprocess.run([str(EXE), "estimate", "--help"], capture_output=True, text=True, env=env).stdout
    assert "--gradient-checkpointing / --no-gradient-checkpointing" in estimate
