"""`gpu-advisor export`: the recommendation of a conversation (or of a saved `recommend --json`) as a task file."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from cli.output import UserError, console, print_json


def write_new_file(path: Path, text: str, *, force: bool) -> None:
    """Write `text` to `path`; an existing file is replaced only with --force, and never a missing folder made."""
    if path.exists() and not force:
        raise UserError(f"{path} already exists; choose another name or add --force to replace it")
    if not path.parent.is_dir():
        raise UserError(f"folder {path.parent} does not exist")
    if path.exists() and not path.is_file():
        raise UserError(f"{path} is not a regular file")
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _load_result(source: Path | None, thread: str | None) -> dict:
    """The turn result to export: a saved `recommend --json` document, or a conversation's last turn."""
    if (source is None) == (thread is None):
        raise UserError("give either --thread ID or --from FILE (a saved `gpu-advisor recommend --json` output)")
    if source is not None:
        try:
            result = json.loads(source.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise UserError(f"cannot read {source} as a recommend --json document ({error})") from error
        if not isinstance(result, dict) or "offers" not in result:
            raise UserError(f"{source} is not a `gpu-advisor recommend --json` document (no 'offers')")
        return result
    from agent.service import Advisor

    advisor = Advisor()
    try:
        result = advisor.rerun_current_job(thread)
    finally:
        advisor.close()
    if result is None:
        raise UserError(f"no job in a conversation with thread id {thread!r}")
    return result


def register(app: typer.Typer) -> None:
    """Add the `export` command to the CLI."""

    @app.command("export")
    def export_command(
        thread: str | None = typer.Option(None, "--thread", help="Conversation whose last recommendation to export."),
        source: Path | None = typer.Option(None, "--from", help="A saved `gpu-advisor recommend --json` document."),
        format_name: str = typer.Option("skypilot", "--format", help="Task format; only 'skypilot' for now."),
        output: Path | None = typer.Option(None, "--output", "-o", help="Write the task here (else print it)."),
        force: bool = typer.Option(False, "--force", help="Replace --output if it already exists."),
        json_output: bool = typer.Option(False, "--json", help="Print one JSON document (task, YAML, command)."),
    ) -> None:
        """Export the recommended offer as a SkyPilot task (`sky jobs launch task.yaml`)."""
        if format_name != "skypilot":
            raise UserError(f"unknown format {format_name!r}; the only format is 'skypilot'")
        from agent.export import ExportError, build_task, exported_offer

        try:
            task = build_task(_load_result(source, thread))
        except ExportError as error:
            raise UserError(str(error)) from error
        if output is not None:
            write_new_file(output, task.yaml, force=force)
        if task.note:  # the recommended offer's cloud cannot be launched: say which offer the task uses instead
            sys.stderr.write(task.note + "\n")
        if json_output:
            print_json(
                {
                    "format": "skypilot",
                    "task": task.config,
                    "yaml": task.yaml,
                    "launch_command": task.launch_command,
                    "required_env": task.required_env,
                    "written_to": str(output) if output else None,
                    "note": task.note,
                    "offer": exported_offer(task.offer),
                }
            )
        elif output is None:
            typer.echo(task.yaml, nl=False)
        else:
            console.print(f"wrote {output}; launch with: {task.launch_command.replace('task.yaml', str(output))}")
