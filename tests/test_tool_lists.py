"""The lists that name every tool (the MCP server's instructions, the tool agent's system prompt) come from the
registry: a new tool is named in both without editing either (CONTRIBUTING's "A tool" recipe)."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import BaseModel

from agent import toolbox
from agent.tool_agent import _system
from web.mcp.server import build_server


class _Nothing(BaseModel):
    """No arguments."""


def test_every_registered_tool_is_named_in_both_lists() -> None:
    listed = toolbox.tool_summaries()
    assert all(tool.summary and tool.summary in listed for tool in toolbox.TOOLS)
    assert listed in _system("en", None) and listed in (build_server().instructions or "")


def test_a_new_tool_appears_in_both_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    extra = dataclasses.replace(
        toolbox.TOOLS[0],
        name="carbon",
        summary="a carbon-footprint estimate",
        input_model=_Nothing,
        output_model=_Nothing,
    )
    monkeypatch.setattr(toolbox, "TOOLS", (*toolbox.TOOLS, extra))
    assert "a carbon-footprint estimate" in _system("it", {"model": "llama-3-8b"})
    assert "a carbon-footprint estimate" in (build_server().instructions or "")
