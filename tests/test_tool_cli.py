"""The CLI on the tool registry: `gpu-advisor tool` lists, describes and calls the same tools as HTTP and MCP, and
`rank`/`spot` run through the registry; bad arguments are one-line errors."""

from __future__ import annotations

import json

import pytest

from agent.toolbox import REGISTRY, ToolContext, call_tool
from cli.app import main
from tools.catalog.query import ensure_db


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    return ensure_db(tmp_path_factory.mktemp("tool-cli") / "catalog.sqlite")


def run_json(capsys, *argv: str) -> dict:
    """Run the CLI and parse its JSON output."""
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_tool_lists_every_registered_tool(capsys):
    assert main(["tool"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in REGISTRY)


def test_tool_schema_is_the_registry_input_schema(capsys):
    assert run_json(capsys, "tool", "topology", "--schema") == REGISTRY["topology"].input_schema()


def test_tool_call_gives_the_registry_result(capsys, catalog):
    arguments = {"gpu": "H100", "limit": 2}
    got = run_json(capsys, "tool", "catalog_query", json.dumps(arguments), "--db", str(catalog))
    assert got == call_tool("catalog_query", arguments, ToolContext(catalog)).model_dump(mode="json")


def test_rank_and_spot_commands_run_through_the_registry(capsys, catalog):
    got = run_json(
        capsys, "rank", "--model", "llama-3.1-8b", "--method", "qlora", "--limit", "3", "--db", str(catalog), "--json"
    )
    expected = call_tool("rank", {"model": "llama-3.1-8b", "method": "qlora", "limit": 3}, ToolContext(catalog))
    assert got["offers"] == expected.model_dump(mode="json")["offers"]
    spot = run_json(capsys, "spot", "--job-hours", "10", "--spot-price", "1.1", "--on-demand-price", "2.2", "--json")
    assert spot == call_tool(
        "spot_risk", {"job_hours": 10, "spot_price_per_hour": 1.1, "on_demand_price_per_hour": 2.2}
    ).model_dump(mode="json")


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["tool", "estimate", '{"model": "llama-3.1-8b", "method": "qlora", "num_gpus": -1}'], "num_gpus"),
        (["tool", "estimate", "{broken"], "not valid JSON"),
        (["tool", "buy_gpus"], "unknown tool"),
        (["tool", "provider_info", '{"provider": "evilcloud"}'], "unknown provider"),
    ],
)
def test_bad_tool_arguments_are_one_line_errors(capsys, argv, words):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(("gpu", "closest"), [("H900", "H100"), ("A1000", "A100")])
def test_an_unknown_gpu_in_a_catalog_query_is_an_error_with_the_closest_names(catalog, gpu, closest):
    """`catalog_query {"gpu": "H900"}` used to return an empty list: a name the GPU table does not know is refused
    with the closest known names, while a known GPU the catalog has no offer for is still an empty list."""
    from agent.toolbox import ToolInputError

    with pytest.raises(ToolInputError, match=rf"unknown GPU '{gpu}'.*{closest}"):
        call_tool("catalog_query", {"gpu": gpu}, ToolContext(catalog))
    assert call_tool("catalog_query", {"gpu": "H100", "limit": 3}, ToolContext(catalog)).offers


def test_an_error_never_echoes_a_huge_input(catalog):
    """A 100 KB argument name or value comes back as a short excerpt, not the whole input."""
    from agent.toolbox import ToolInputError

    huge = "x" * 100_000
    for arguments in ({huge: 1, "model": "llama-3.1-8b"}, {"model": "llama-3.1-8b", "method": huge}):
        with pytest.raises(ToolInputError) as raised:
            call_tool("estimate", arguments, ToolContext(catalog))
        assert len(str(raised.value)) < 600, len(str(raised.value))
