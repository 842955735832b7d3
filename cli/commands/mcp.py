"""`gpu-advisor mcp`: the tool registry as an MCP server over stdio, for IDE agents and desktop clients."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    """Add the `mcp` command to the CLI."""

    @app.command("mcp")
    def mcp_command(
        db: Path | None = typer.Option(None, "--db", help="Offers database (default: the data dir's catalog)."),
    ) -> None:
        """Serve estimate, catalog_query, rank, topology, spot_risk, faq_search and provider_info over MCP (stdio).

        Point your MCP client at the command `gpu-advisor mcp`. `gpu-advisor serve` serves the same tools over
        streamable HTTP at /mcp."""
        import anyio  # on use: keeps `--help` fast

        from agent.toolbox import ToolContext
        from tools.catalog import ensure_db
        from web.mcp import serve_stdio

        context = ToolContext(ensure_db(db))
        anyio.run(serve_stdio, lambda: context)
