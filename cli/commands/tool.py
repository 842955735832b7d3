"""`gpu-advisor tool [NAME] [ARGS]`: list the registry's tools, show one's input schema, or call it with JSON args.

The same tools, input and output models as the HTTP endpoints (/api/tools/<name>), the MCP server and the LLM's
function calls (agent/toolbox.py): a tool is defined once.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from cli.output import UserError, console, print_json


def register(app: typer.Typer) -> None:
    """Add the `tool` command to the CLI."""

    @app.command("tool")
    def tool_command(
        name: str | None = typer.Argument(None, help="Tool name; omit to list the tools."),
        arguments: str | None = typer.Argument(None, help="Arguments as a JSON object, or '-' for stdin."),
        schema: bool = typer.Option(False, "--schema", help="Print the tool's input JSON schema instead."),
        db: Path | None = typer.Option(None, "--db", help="Offers database (default: the data dir's catalog)."),
    ) -> None:
        """Call one deterministic tool (estimate, catalog_query, rank, topology, spot_risk, faq_search,
        provider_info) and print its JSON result."""
        from agent.toolbox import TOOLS, ToolContext, call_tool, get_tool  # on use: keeps `--help` fast

        if name is None:
            for tool in TOOLS:
                console.print(f"[bold]{tool.name}[/bold]  {tool.description}")
            return
        tool = get_tool(name)
        if schema:
            print_json(tool.input_schema())
            return
        text = sys.stdin.read() if arguments == "-" else (arguments or "{}")
        try:
            json.loads(text)
        except json.JSONDecodeError as error:
            raise UserError(f"arguments are not valid JSON (column {error.colno}: {error.msg})") from None
        print_json(call_tool(tool.name, text, ToolContext(db)))
