"""The MCP server with the official SDK's own client: over stdio (`gpu-advisor mcp` as a subprocess) and over
streamable HTTP (a real uvicorn serving the API app at /mcp). List the tools, call each one, and see that bad
arguments and unknown tools come back as tool errors while the server keeps answering."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from agent.toolbox import REGISTRY, ToolContext, call_tool
from tests.web_server import serve, test_settings
from tools.catalog.query import ensure_db

GPU_ADVISOR = Path(sys.executable).with_name("gpu-advisor")
VALID_ARGUMENTS = {
    "estimate": {"model": "llama-3.1-8b", "method": "qlora", "gpu": "L4"},
    "catalog_query": {"gpu": "H100", "limit": 3},
    "rank": {"model": "llama-3.1-8b", "method": "qlora", "dataset_tokens": 20_000_000, "limit": 3},
    "topology": {"job": {"model": "llama-3.1-8b", "method": "lora"}, "candidate": {"gpu": "A100", "gpu_count": 4}},
    "spot_risk": {
        "job_hours": 10,
        "provider": "runpod",
        "spot_price_per_hour": 1.1,
        "on_demand_price_per_hour": 2.2,
        "checkpoint_write_s": 60,
    },
    "faq_search": {"question": "can I use spot instances for fine-tuning?"},
    "provider_info": {"provider": "runpod"},
}
BAD_ARGUMENTS = [
    ("estimate", {"model": "llama-3.1-8b", "method": "qlora", "num_gpus": -1}, "num_gpus"),
    ("catalog_query", {"limit": "many"}, "limit"),
    ("topology", {"job": {"method": "lora"}, "candidate": {"gpu": "A100", "gpu_count": 4}}, "params_b"),
    ("provider_info", {"provider": "evilcloud"}, "unknown provider"),
    ("no_such_tool", {}, "unknown tool"),
]


@pytest.fixture(scope="module")
def catalog(tmp_path_factory) -> Path:
    return ensure_db(tmp_path_factory.mktemp("mcp") / "catalog.sqlite")


def _undescribed(schema: dict, where: str = "") -> list[str]:
    """Properties of a JSON schema (and of its $defs) without a description."""
    missing = []
    for name, prop in (schema.get("properties") or {}).items():
        if "description" not in prop:
            missing.append(f"{where}{name}")
    for name, sub in (schema.get("$defs") or {}).items():
        missing += _undescribed(sub, f"{name}.")
    return missing


async def exercise(session: ClientSession, catalog: Path) -> None:
    """The checks every transport must pass."""
    await session.initialize()
    listed = (await session.list_tools()).tools
    assert sorted(t.name for t in listed) == sorted(REGISTRY)
    for tool in listed:
        assert tool.input_schema == REGISTRY[tool.name].input_schema() and tool.description
        assert _undescribed(tool.input_schema) == [], tool.name  # every argument says what it is
    estimate_schema = next(t.input_schema for t in listed if t.name == "estimate")
    assert "config_path" not in estimate_schema["properties"]  # refused for remote callers: not advertised either
    refused = await session.call_tool("estimate", {"model": "llama-3.1-8b", "config_path": "/etc/passwd"})
    assert refused.is_error and "config_path" in refused.content[0].text
    for name, arguments in VALID_ARGUMENTS.items():
        result = await session.call_tool(name, arguments)
        assert not result.is_error, (name, result.content)
        expected = call_tool(name, arguments, ToolContext(catalog)).model_dump(mode="json")
        assert result.structured_content == expected, name  # the same numbers as the registry gives in-process
    for name, arguments, words in BAD_ARGUMENTS:
        result = await session.call_tool(name, arguments)
        assert result.is_error and words in result.content[0].text, (name, result.content)
    again = await session.call_tool("provider_info", {"provider": "aws"})  # still serving after the errors
    assert not again.is_error and again.structured_content["providers"][0]["id"] == "aws"


def test_stdio_server_lists_and_calls_every_tool(catalog, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["GPU_ADVISOR_HOME"] = str(tmp_path)
    params = StdioServerParameters(command=str(GPU_ADVISOR), args=["mcp", "--db", str(catalog)], env=env)

    async def run() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await exercise(session, catalog)

    anyio.run(run)


def test_streamable_http_server_under_serve_lists_and_calls_every_tool(catalog, tmp_path):
    with serve(test_settings(tmp_path, catalog)) as running:

        async def run() -> None:
            async with streamable_http_client(f"{running.url}/mcp") as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await exercise(session, catalog)

        anyio.run(run)


def test_a_foreign_host_header_is_refused_on_a_local_server(catalog, tmp_path):
    import httpx2

    with serve(test_settings(tmp_path, catalog)) as running:
        response = httpx2.post(
            f"{running.url}/mcp",
            headers={"Host": "evil.example.com", "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        )
    assert response.status_code in (400, 403, 421)
