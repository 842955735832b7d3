"""An MCP server (official `mcp` SDK, low-level server) exposing every tool of the registry (agent/toolbox.py)."""

from web.mcp.http import mount_mcp
from web.mcp.server import serve_stdio

__all__ = ["mount_mcp", "serve_stdio"]
