"""The tool list the LLM gets is compact enough for a small server (issue 29: ~23 KB, and faq_search's 2,000-character
bound crashed llama.cpp's server), yet names every argument the registry accepts; MCP/HTTP keep the full schemas."""

from __future__ import annotations

import copy
import json
from typing import Any

from agent.tool_schemas import llm_tools
from agent.toolbox import TOOLS, openai_tools

MAX_TOOL_CHARS = 4_000
MAX_TOTAL_CHARS = 14_000
"""About 13 KB today (the full registry list is ~23 KB); the cross-field rules added to the schemas took it past 13."""
BOUND_KEYS = {"maxLength", "minLength", "maximum", "minimum", "exclusiveMinimum", "exclusiveMaximum", "title"}


def _walk(schema: Any) -> list[dict[str, Any]]:
    """Every dict inside a schema."""
    if isinstance(schema, dict):
        return [schema] + [d for value in schema.values() for d in _walk(value)]
    if isinstance(schema, list):
        return [d for value in schema for d in _walk(value)]
    return []


def _shape(schema: dict[str, Any], root: dict[str, Any]) -> Any:
    """Property names, required lists and enum values, with $refs resolved and `X or null` read as X."""
    if "$ref" in schema:
        return _shape(root["$defs"][schema["$ref"].rsplit("/", 1)[1]], root)
    options = [o for o in schema.get("anyOf", []) if o != {"type": "null"}]
    if len(options) == 1:
        return _shape(options[0], root)
    if "properties" in schema:
        return {
            "required": sorted(schema.get("required", [])),
            "properties": {name: _shape(item, root) for name, item in schema["properties"].items()},
        }
    if "items" in schema:
        return ["items", _shape(schema["items"], root)]
    return {"type": schema.get("type"), "enum": schema.get("enum")}


def test_the_list_sent_to_the_llm_is_bounded_per_tool_and_in_total():
    tools = llm_tools()
    sizes = {tool["function"]["name"]: len(json.dumps(tool)) for tool in tools}
    assert all(size <= MAX_TOOL_CHARS for size in sizes.values()), sizes
    assert sum(sizes.values()) <= MAX_TOTAL_CHARS, sizes
    full = sum(len(json.dumps(tool)) for tool in openai_tools())
    assert sum(sizes.values()) < full * 0.6, (sum(sizes.values()), full)


def test_no_bounds_titles_or_long_descriptions_reach_the_llm():
    for tool in llm_tools():
        nodes = _walk(tool["function"]["parameters"])
        assert not [key for node in nodes for key in node if key in BOUND_KEYS], tool["function"]["name"]
        descriptions = [node["description"] for node in nodes if isinstance(node.get("description"), str)]
        assert all(len(text) <= 60 for text in descriptions), descriptions
        assert len(tool["function"]["description"]) <= 100
    faq = next(t for t in llm_tools() if t["function"]["name"] == "faq_search")["function"]["parameters"]
    assert faq["properties"]["question"] == {"description": "The question, in it, id or en", "type": "string"}


def test_no_description_repeats_its_enum_values():
    for tool in llm_tools():
        for node in _walk(tool["function"]["parameters"]):
            if isinstance(node.get("enum"), list) and "description" in node:
                words = node["description"].replace(",", " ").split()
                assert not all(str(value) in words for value in node["enum"]), (tool["function"]["name"], node)


def test_the_compact_list_names_every_argument_type_and_enum_the_registry_accepts():
    for tool, compact in zip(TOOLS, llm_tools(), strict=True):
        full = tool.input_schema()
        params = compact["function"]["parameters"]
        assert compact["function"]["name"] == tool.name
        assert _shape(params, params) == _shape(full, full), tool.name


def test_mcp_and_http_schemas_keep_their_full_descriptions_and_bounds():
    before = copy.deepcopy([tool.input_schema() for tool in TOOLS])
    llm_tools()
    after = [tool.input_schema() for tool in TOOLS]
    assert after == before
    faq = next(t for t in TOOLS if t.name == "faq_search").input_schema()
    assert faq["properties"]["question"]["maxLength"] == 2000
    assert [t["function"]["description"] for t in openai_tools()] == [t.description for t in TOOLS]
