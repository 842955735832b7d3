"""An MCP server (official `mcp` SDK, low-level server) exposing every tool of the registry (agent/toolbox.py).

Tools are listed with their pydantic input and output JSON schemas; a call validates its arguments through the
registry and runs the deterministic function in a worker thread. Bad arguments, an unknown tool or a tool's own
ValueError come back as a tool error (`is_error`, one readable line), never a crash. Used by `gpu-advisor mcp`
(stdio) and by `serve` (streamable HTTP under /mcp, web/mcp/http.py).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from agent.toolbox import TOOLS, ToolContext, ToolInputError, call_tool, tool_summaries
from contract.errors import UserError

log = logging.getLogger("gpu_advisor.mcp")
SERVER_NAME = "gpu-advisor"
INSTRUCTIONS = (
    "Deterministic tools for renting GPUs to train or fine-tune models: {tools}. Every number comes "
    "from these tools; quote them, do not invent prices."
)
"""The server's instructions; `{tools}` is the registry's list, so a new tool is named without editing this."""


def _version() -> str:
    """The installed package version, for the server's identity."""
    try:
        return version("gpu-advisor")
    except PackageNotFoundError:
        return "0"


def mcp_tools() -> list[types.Tool]:
    """The registry as MCP tool definitions."""
    return [
        types.Tool(
            name=tool.name,
            description=tool.description,
            input_schema=tool.input_schema(),
            output_schema=tool.output_model.model_json_schema(),
        )
        for tool in TOOLS
    ]


def _error(text: str) -> types.CallToolResult:
    """A tool error the calling model can read and correct."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def run_tool(name: str, arguments: dict | None, context: ToolContext) -> types.CallToolResult:
    """One tool call as an MCP result: JSON text plus the same structured content, or a tool error."""
    try:
        result = call_tool(name, arguments or {}, context)
    except (ToolInputError, UserError) as error:
        return _error(str(error))
    except Exception:
        log.exception("MCP tool %r failed", name)
        return _error(f"{name}: the tool failed on this input")
    data = result.model_dump(mode="json")
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(data, ensure_ascii=False))], structured_content=data
    )


def build_server(context: Callable[[], ToolContext] = ToolContext) -> Server:
    """A low-level MCP server over the registry; `context` gives each call its ToolContext (catalog path)."""

    async def list_tools(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=mcp_tools())

    async def call(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await anyio.to_thread.run_sync(run_tool, params.name, params.arguments, context())

    schemas = {tool.name: tool.input_schema() for tool in TOOLS}
    return Server(
        SERVER_NAME,
        version=_version(),
        instructions=INSTRUCTIONS.format(tools=tool_summaries()),
        get_tool_input_schema=schemas.get,
        on_list_tools=list_tools,
        on_call_tool=call,
    )


async def serve_stdio(context: Callable[[], ToolContext] = ToolContext) -> None:
    """Serve the tools over stdin/stdout until the client closes the connection; malformed lines get errors."""
    from web.mcp.stdio import serve_screened_stdio

    await serve_screened_stdio(lambda: build_server(context))
