"""The one tool registry: name, description, pydantic input and output models, and the function, for every tool.

It feeds the OpenAI function-calling schemas (agent/tool_agent.py), the HTTP tool endpoints (web/tools_api.py), the
MCP server (web/mcp/server.py, `gpu-advisor mcp`) and the CLI, so a tool is defined once. `call_tool` validates the
arguments, runs the deterministic function and returns the output model; bad arguments or an unknown tool raise
`ToolInputError` with one readable line.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.json_schema import SkipJsonSchema

from agent.faq_answer import FaqAnswer, answer_question
from contract.errors import UserError
from contract.jobspec import JobSpec, Language, describe_validation_error
from contract.schema_gate import one_of_required, schema_violation
from tools.catalog import SORTS, CatalogError, Offer, query_offers
from tools.gpus import closest_gpu_names, lookup_gpu
from tools.jobtime import (
    Candidate,
    EstimateWithThroughput,
    TopologyResult,
    build_workload,
    check_topology,
    throughput_block,
)
from tools.memory import Estimate, EstimateRequest, estimate
from tools.providers import (
    ProviderInfo,
    all_providers,
    get_provider,
    normalise_provider,
    provider_name_pattern,
)
from tools.ranking import RankingResult, rank_offers
from tools.spot import SpotRiskRequest, SpotRiskResult, assess_spot

MAX_CATALOG_LIMIT = 500


class ToolInputError(UserError):
    """Arguments a tool cannot run with (unknown tool, invalid JSON, a value out of range): one readable line."""


@dataclass(frozen=True)
class ToolContext:
    """What a tool may need from its caller: the offers database (None = the default one)."""

    db_path: Path | None = None


class CatalogQuery(BaseModel):
    """Filters for the offers catalog (every one optional)."""

    model_config = ConfigDict(extra="forbid")

    gpu: str | None = Field(None, max_length=64, description="GPU in any spelling: A100, h100-sxm, 4090.")
    min_vram_gib: float | None = Field(None, ge=0, le=10_000, description="Minimum GiB per GPU.")
    gpu_count: int | None = Field(None, ge=1, le=1024, description="Exactly this many GPUs per instance.")
    min_gpu_count: int | None = Field(None, ge=1, le=1024, description="At least this many GPUs per instance.")
    provider: list[str] | None = Field(None, max_length=20, description="Provider ids, e.g. ['runpod', 'aws'].")
    region: list[str] | None = Field(None, max_length=20, description="Regions or zones, e.g. ['eu-west-1'].")
    spot_only: bool = Field(False, description="Only offers with a spot price.")
    max_price: float | None = Field(
        None, ge=0, le=1e6, description="USD/hour for the instance (spot price with spot_only)."
    )
    interconnect: Literal["nvlink", "pcie", "unknown", "none"] | None = Field(
        None, description="GPU-to-GPU link inside the instance: nvlink, pcie, unknown or none."
    )
    sort: Literal[tuple(SORTS)] = Field("price", description="Sort key.")  # type: ignore[valid-type]
    limit: int = Field(20, ge=1, le=MAX_CATALOG_LIMIT, description="At most this many offers.")


class CatalogResult(BaseModel):
    """Offers matching every filter, in the requested order."""

    offers: list[Offer]


class RankRequest(JobSpec):
    """A job (JobSpec fields) and how many ranked offers to return."""

    model_config = ConfigDict(json_schema_extra=one_of_required("model", "params_b"))

    language: Language = Field("en", description="Language of the conversation: it, id or en.")
    limit: int = Field(10, ge=1, le=50, description="At most this many offers.")


class JobInput(JobSpec):
    """A job (JobSpec fields, a model or params_b among them); the language defaults to English."""

    model_config = ConfigDict(json_schema_extra=one_of_required("model", "params_b"))

    language: Language = Field("en", description="Language of the conversation: it, id or en.")


class TopologyRequest(BaseModel):
    """A job and a set of GPUs to run it on."""

    model_config = ConfigDict(extra="forbid")

    job: JobInput = Field(description="What to train: model or params_b, method, seq_len, micro_batch_size...")
    candidate: Candidate = Field(description="Which GPU, how many, GPUs per node, interconnect.")


class FaqSearch(BaseModel):
    """A why/how question for the FAQ knowledge base."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=2000, description="The question, in it, id or en.")
    language: Language | None = Field(None, description="Answer language; detected when omitted.")


class ProviderQuery(BaseModel):
    """One provider, or all of them."""

    model_config = ConfigDict(extra="forbid")

    provider: str | None = Field(
        None,
        max_length=64,
        description="Provider id or name; all providers when omitted.",
        json_schema_extra={
            "pattern": provider_name_pattern(),
            "x-refusal": "unknown provider; known providers: " + ", ".join(p.id for p in all_providers()),
        },
    )


class ProvidersResult(BaseModel):
    """What the providers' docs say about billing granularity, spot capacity and networking."""

    providers: list[ProviderInfo]


OFFLOAD_RULES = [  # what EstimateRequest's layout check refuses, as JSON-schema conditions
    {
        "if": {"required": ["offload"], "properties": {"offload": {"enum": ["optimizer", "optimizer+params"]}}},
        "then": {"required": ["sharding"], "properties": {"sharding": {"enum": ["zero1", "zero2", "zero3", "fsdp"]}}},
    },
    {
        "if": {"required": ["offload"], "properties": {"offload": {"const": "optimizer+params"}}},
        "then": {"required": ["sharding"], "properties": {"sharding": {"enum": ["zero3", "fsdp"]}}},
    },
]


class EstimateToolRequest(EstimateRequest):
    """The estimator's arguments for remote callers: no local config.json path (neither accepted nor advertised); a
    model name or params_b."""

    model_config = ConfigDict(json_schema_extra={**one_of_required("model", "params_b"), "allOf": OFFLOAD_RULES})

    config_path: SkipJsonSchema[None] = None


def _estimate(body: EstimateRequest, context: ToolContext) -> Estimate:
    """Per-GPU training memory (no local config files from remote callers); with a GPU named, the throughput block
    on num_gpus of them."""
    if body.config_path:
        raise ToolInputError("config_path is not accepted here; give a model name or params_b")
    result = estimate(body)
    if body.gpu is None:
        return result
    return EstimateWithThroughput(
        **result.model_dump(), throughput=throughput_block(body, gpu=body.gpu, gpus=body.num_gpus)
    )


def _catalog(body: CatalogQuery, context: ToolContext) -> CatalogResult:
    """Filter and sort the offers catalog; a GPU name the GPU table does not know is refused with the closest."""
    if body.gpu and lookup_gpu(body.gpu) is None:
        raise ToolInputError(f"unknown GPU '{body.gpu}'; closest known names: {', '.join(closest_gpu_names(body.gpu))}")
    offers = query_offers(
        context.db_path,
        gpu=body.gpu,
        min_vram_gib=body.min_vram_gib,
        gpu_count=body.gpu_count,
        min_gpu_count=body.min_gpu_count,
        providers=body.provider,
        regions=body.region,
        spot_only=body.spot_only,
        max_price=body.max_price,
        interconnect=body.interconnect,
        sort=body.sort,
        limit=body.limit,
    )
    return CatalogResult(offers=offers)


def _rank(body: RankRequest, context: ToolContext) -> RankingResult:
    """Offers the job fits on, cheapest expected total cost first."""
    spec = JobSpec.model_validate(body.model_dump(exclude={"limit"}))
    return rank_offers(spec, db_path=context.db_path, limit=body.limit)


def _topology(body: TopologyRequest, context: ToolContext) -> TopologyResult:
    """Verdict, layout and communication share of a job on a set of GPUs."""
    return check_topology(build_workload(JobSpec.model_validate(body.job.model_dump())), body.candidate)


def _faq(body: FaqSearch, context: ToolContext) -> FaqAnswer:
    """Grounded FAQ answer with citations (extractive)."""
    return answer_question(body.question, lang=body.language)


def _providers(body: ProviderQuery, context: ToolContext) -> ProvidersResult:
    """Billing and spot facts of one provider or all."""
    if body.provider is None:
        return ProvidersResult(providers=all_providers())
    info = get_provider(normalise_provider(body.provider))
    if info is None:
        known = ", ".join(p.id for p in all_providers())
        raise ToolInputError(f"unknown provider '{body.provider}'; known providers: {known}")
    return ProvidersResult(providers=[info])


@dataclass(frozen=True)
class Tool:
    """One registered tool."""

    name: str
    description: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    function: Callable[[Any, ToolContext], BaseModel]
    summary: str = ""
    """A few words for the lists that name every tool (the MCP server's instructions, the tool agent's prompt)."""

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments."""
        return self.input_model.model_json_schema()


TOOLS: tuple[Tool, ...] = (
    Tool(
        "estimate",
        "Peak training memory (VRAM) per GPU for a model, method and setup, with its breakdown and the "
        "fit on a GPU when one is named; with a GPU, also the throughput on num_gpus of them (layout, tokens/s per "
        "GPU, step time, MFU, communication share).",
        EstimateToolRequest,
        EstimateWithThroughput,
        _estimate,
        "a memory estimator",
    ),
    Tool(
        "catalog_query",
        "Filter and sort the catalog of rentable GPU offers (provider, instance, GPU, count, "
        "region, on-demand and spot USD/hour).",
        CatalogQuery,
        CatalogResult,
        _catalog,
        "the offers catalog",
    ),
    Tool(
        "rank",
        "Rank catalog offers for a training job by expected total cost (memory fit, topology, time, spot "
        "risk, budget, deadline), with the cheapest and fastest alternatives.",
        RankRequest,
        RankingResult,
        _rank,
        "a ranking of offers by total job cost",
    ),
    Tool(
        "topology",
        "Check whether and how a job runs on a given set of GPUs: layout, per-GPU memory and the share "
        "of each step spent communicating.",
        TopologyRequest,
        TopologyResult,
        _topology,
        "a topology checker",
    ),
    Tool(
        "spot_risk",
        "Spot versus on-demand for one job: expected preemptions, checkpoint interval, expected cost "
        "and the chance to finish by a deadline.",
        SpotRiskRequest,
        SpotRiskResult,
        lambda b, c: assess_spot(b),
        "spot-risk analysis",
    ),
    Tool(
        "faq_search",
        "Answer a why/how question about renting GPUs for training from the FAQ knowledge base, with citations.",
        FaqSearch,
        FaqAnswer,
        _faq,
        "a cited FAQ",
    ),
    Tool(
        "provider_info",
        "What providers' docs say: billing granularity and minimum, spot availability and notice, "
        "egress price, inter-node fabric.",
        ProviderQuery,
        ProvidersResult,
        _providers,
        "provider facts (billing granularity, spot)",
    ),
)
REGISTRY: dict[str, Tool] = {tool.name: tool for tool in TOOLS}


def tool_summaries() -> str:
    """Every tool in a few words, one list ('a memory estimator, the offers catalog, ... and a cited FAQ')."""
    names = [tool.summary or tool.name for tool in TOOLS]
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def get_tool(name: str) -> Tool:
    """The tool called `name`; ToolInputError naming the known tools otherwise."""
    tool = REGISTRY.get(name)
    if tool is None:
        raise ToolInputError(f"unknown tool '{name}'; tools: {', '.join(REGISTRY)}")
    return tool


def parse_arguments(tool: Tool, arguments: str | dict[str, Any] | BaseModel | None) -> BaseModel:
    """Validate arguments (a JSON string, a dict or the input model) into the tool's input model."""
    if isinstance(arguments, tool.input_model):
        return arguments
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except json.JSONDecodeError as error:
            raise ToolInputError(f"{tool.name}: arguments are not valid JSON ({error.msg})") from None
    if isinstance(arguments, BaseModel):
        arguments = arguments.model_dump()
    if not isinstance(arguments, dict):
        raise ToolInputError(f"{tool.name}: arguments must be a JSON object")
    try:
        body = tool.input_model.model_validate(arguments)
    except ValidationError as error:
        raise ToolInputError(f"{tool.name}: {describe_validation_error(error)}") from None
    problem = schema_violation(tool.input_model, arguments)  # what the advertised schema forbids is refused too
    if problem:
        raise ToolInputError(f"{tool.name}: {problem}")
    return body


def call_tool(
    name: str, arguments: str | dict[str, Any] | BaseModel | None, context: ToolContext | None = None
) -> BaseModel:
    """Run one tool on validated arguments; ToolInputError for bad input (including the tools' own ValueErrors)."""
    tool = get_tool(name)
    body = parse_arguments(tool, arguments)
    try:
        return tool.function(body, context or ToolContext())
    except (ToolInputError, CatalogError):  # an unusable catalog is not the caller's input: 503, not 422
        raise
    except (UserError, ValueError) as error:
        message = describe_validation_error(error) if isinstance(error, ValidationError) else str(error)
        raise ToolInputError(f"{name}: {' '.join(message.split())}") from None


def openai_tools() -> list[dict[str, Any]]:
    """The registry as OpenAI function-calling tool definitions."""
    return [
        {
            "type": "function",
            "function": {"name": tool.name, "description": tool.description, "parameters": tool.input_schema()},
        }
        for tool in TOOLS
    ]
