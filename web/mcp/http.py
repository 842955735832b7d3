"""MCP over streamable HTTP at /mcp of the API server: the registry's tools (web/mcp/server.py) for remote agents.

`mount_mcp(app)` adds the SDK's streamable-HTTP endpoint as a route of the FastAPI app and runs its session manager
inside the app's lifespan (a mounted Starlette app's own lifespan would never run). Local hosts get the SDK's DNS
rebinding protection; behind other host names it is left to the deployment's proxy.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from mcp.server.transport_security import TransportSecuritySettings

from agent.toolbox import ToolContext
from web.mcp.server import build_server

MCP_PATH = "/mcp"
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def _context_of(app: FastAPI) -> ToolContext:
    """The tools' context from the running app: its offers database."""
    resources = getattr(app.state, "resources", None)
    return ToolContext(getattr(resources, "catalog_path", None))


def mount_mcp(app: FastAPI, *, host: str = "127.0.0.1") -> None:
    """Serve the MCP tools at MCP_PATH (streamable HTTP, stateless JSON-RPC sessions not required)."""
    server = build_server(lambda: _context_of(app))
    security = None if host in LOCAL_HOSTS else TransportSecuritySettings(enable_dns_rebinding_protection=False)
    mcp_app = server.streamable_http_app(
        streamable_http_path=MCP_PATH, stateless_http=True, transport_security=security, host=host
    )
    app.router.routes.extend(mcp_app.routes)
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(running: FastAPI) -> AsyncIterator[Any]:
        async with mcp_app.router.lifespan_context(mcp_app), inner(running) as state:
            yield state

    app.router.lifespan_context = lifespan
