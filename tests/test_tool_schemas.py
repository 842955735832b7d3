"""Every tool's advertised schema says what the tool accepts, field by field: the MCP tools/list schema (read with
the MCP SDK's own client, over `gpu-advisor mcp`) is the HTTP OpenAPI request body of /api/tools/<name>, every field
has a description, and for every field a value of each JSON type the schema does not allow is refused naming the
field, while the schema's own examples of allowed values (defaults, enum members) are accepted whenever the whole
call satisfies the schema (its cross-field rules included)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.test_mcp import VALID_ARGUMENTS, _undescribed
from tools.catalog import ensure_db
from web.app import create_app
from web.settings import ServerSettings

GPU_ADVISOR = Path(sys.executable).with_name("gpu-advisor")
SAMPLES: dict[str, Any] = {
    "string": "x",
    "number": 0.5,
    "integer": 3,
    "boolean": True,
    "array": [],
    "object": {},
    "null": None,
}


def _resolve(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """A schema node with a local $ref followed."""
    while "$ref" in node:
        node = root["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def allowed_types(prop: dict[str, Any], root: dict[str, Any]) -> set[str]:
    """The JSON types a property's schema admits (integer implies number's integral values only)."""
    prop = _resolve(prop, root)
    if "anyOf" in prop:
        return set().union(*(allowed_types(option, root) for option in prop["anyOf"]))
    if "const" in prop or "enum" in prop:
        values = [prop["const"]] if "const" in prop else prop["enum"]
        return {
            {str: "string", bool: "boolean", int: "integer", float: "number", type(None): "null"}[type(v)]
            for v in values
        }
    kind = prop.get("type")
    kinds = set(kind) if isinstance(kind, list) else {kind} if kind else set(SAMPLES)
    return kinds | ({"integer"} if "number" in kinds else set())


def wrong_values(prop: dict[str, Any], root: dict[str, Any]) -> list[tuple[str, Any]]:
    """(type, value) of every JSON type the property does not admit."""
    allowed = allowed_types(prop, root)
    return [
        (kind, value)
        for kind, value in SAMPLES.items()
        if kind not in allowed and not (kind == "integer" and "number" in allowed)
    ]


def allowed_examples(prop: dict[str, Any], root: dict[str, Any]) -> list[Any]:
    """Values the schema itself names as allowed: its default and its enum members."""
    node = _resolve(prop, root)
    options = node.get("anyOf", [node])
    examples = [prop["default"]] if "default" in prop and prop["default"] is not None else []
    for option in options:
        option = _resolve(option, root)
        examples += option.get("enum", []) + ([option["const"]] if "const" in option else [])
    return examples


def openapi_bodies() -> dict[str, dict[str, Any]]:
    """The request-body schema of POST /api/tools/<name>, with components resolved like $defs."""
    schema = create_app(ServerSettings()).openapi()
    components = schema["components"]["schemas"]
    bodies = {}
    for path, operations in schema["paths"].items():
        if path.startswith("/api/tools/"):
            ref = operations["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            bodies[path.rsplit("/", 1)[-1]] = components[ref.rsplit("/", 1)[-1]]
    return bodies


@pytest.fixture(scope="module")
def listed_and_called(tmp_path_factory) -> dict[str, Any]:
    """tools/list through the SDK client, and every field-by-field call's result."""
    home = tmp_path_factory.mktemp("tool_schemas")
    catalog = ensure_db(home / "catalog.sqlite")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["GPU_ADVISOR_HOME"] = str(home)
    params = StdioServerParameters(command=str(GPU_ADVISOR), args=["mcp", "--db", str(catalog)], env=env)
    out: dict[str, Any] = {"calls": []}

    async def run() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = {tool.name: tool.input_schema for tool in (await session.list_tools()).tools}
            out["tools"] = tools
            for name, schema in tools.items():
                for field, prop in schema["properties"].items():
                    for kind, value in wrong_values(prop, schema):
                        result = await session.call_tool(name, {**VALID_ARGUMENTS[name], field: value})
                        out["calls"].append(("wrong", name, field, kind, result))
                    for value in allowed_examples(prop, schema):
                        arguments = {**VALID_ARGUMENTS[name], field: value}
                        if Draft202012Validator(schema).is_valid(arguments):  # cross-field rules hold too
                            result = await session.call_tool(name, arguments)
                            out["calls"].append(("allowed", name, field, value, result))

    anyio.run(run)
    return out


def test_mcp_and_http_advertise_the_same_schema_with_every_field_described(listed_and_called):
    bodies = openapi_bodies()
    assert sorted(listed_and_called["tools"]) == sorted(bodies)
    for name, schema in listed_and_called["tools"].items():
        assert _undescribed(schema) == [], name
        http = bodies[name]
        assert set(http["properties"]) == set(schema["properties"]), name
        for field, prop in schema["properties"].items():  # same types, bounds and words, field by field
            assert allowed_types(http["properties"][field], {"$defs": {}} | {"$defs": _components()}) == allowed_types(
                prop, schema
            ), (name, field)
            for key in ("description", "minimum", "maximum", "exclusiveMinimum", "maxLength", "pattern", "enum"):
                assert http["properties"][field].get(key) == prop.get(key), (name, field, key)


def _components() -> dict[str, Any]:
    """OpenAPI components, addressable like $defs."""
    return create_app(ServerSettings()).openapi()["components"]["schemas"]


def test_every_type_the_schema_forbids_is_refused_naming_the_field(listed_and_called):
    wrong = [
        (name, field, kind, result) for tag, name, field, kind, result in listed_and_called["calls"] if tag == "wrong"
    ]
    assert len(wrong) > 100  # every field of every tool, several types each
    accepted = [(name, field, kind) for name, field, kind, result in wrong if not result.is_error]
    unnamed = [
        (name, field, kind, result.content[0].text[:120])
        for name, field, kind, result in wrong
        if result.is_error and field not in result.content[0].text
    ]
    assert accepted == [] and unnamed == []


def test_values_the_schema_names_as_allowed_are_accepted(listed_and_called):
    allowed = [
        (name, field, value, result)
        for tag, name, field, value, result in listed_and_called["calls"]
        if tag == "allowed"
    ]
    assert len(allowed) > 20
    refused = [
        (name, field, value, result.content[0].text[:160]) for name, field, value, result in allowed if result.is_error
    ]
    assert refused == []
