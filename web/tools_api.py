"""The deterministic tools as plain endpoints for programs, all run through the one registry (agent/toolbox.py).

POST /api/tools/<name> exists for every registered tool (body = its input model, answer = its output model); the
older task-named endpoints (estimate, catalog, rank, spot, faq) stay and call the same registry entries.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Body, Depends, Query
from pydantic import BaseModel, ConfigDict

from agent.faq_answer import FaqAnswer
from agent.toolbox import (
    MAX_CATALOG_LIMIT,
    TOOLS,
    CatalogQuery,
    EstimateToolRequest,
    FaqSearch,
    RankRequest,
    Tool,
    ToolContext,
    call_tool,
)
from contract.jobspec import JobSpec
from contract.schema_gate import one_of_required
from tools.catalog import SORTS, Offer
from tools.memory import Estimate
from tools.ranking import RankingResult
from tools.spot import SpotRiskRequest, SpotRiskResult
from web.body_gate import gated
from web.chat import ERROR_RESPONSES
from web.deps import AppResources, app_resources
from web.schemas import FaqRequest, Language

router = APIRouter(prefix="/api", tags=["tools"], responses=ERROR_RESPONSES)

ESTIMATE_EXAMPLES = {
    "qlora_l4": {
        "summary": "QLoRA on Llama 3.1 8B, checked against an L4",
        "value": {"model": "llama-3.1-8b", "method": "qlora", "gpu": "L4"},
    },
    "full_zero3": {
        "summary": "Full fine-tune of a 70B model on 8 GPUs with ZeRO-3",
        "value": {
            "model": "llama-3.1-70b",
            "method": "full_finetune",
            "num_gpus": 8,
            "sharding": "zero3",
            "gradient_checkpointing": True,
            "gpu": "H100",
        },
    },
}
RANK_EXAMPLES = {
    "qlora_budget": {
        "summary": "QLoRA, 50 EUR budget, spot allowed",
        "value": {
            "language": "en",
            "method": "qlora",
            "model": "llama-3.1-8b",
            "dataset_examples": 20000,
            "budget": {"amount": 50, "currency": "EUR"},
            "interruptible_ok": True,
        },
    },
}
SPOT_EXAMPLES = {
    "ten_hours": {
        "summary": "A 10-hour job on a marketplace GPU",
        "value": {
            "job_hours": 10,
            "provider": "runpod",
            "spot_price_per_hour": 1.1,
            "on_demand_price_per_hour": 2.2,
            "checkpoint_write_s": 60,
        },
    },
}


class RankJob(JobSpec):
    """A job to rank offers for: JobSpec fields, a model name or params_b among them."""

    model_config = ConfigDict(json_schema_extra=one_of_required("model", "params_b"))


@router.post(
    "/estimate",
    response_model=Estimate,
    summary="Per-GPU training memory (VRAM) estimate",
    dependencies=[gated(EstimateToolRequest)],
)
def estimate_endpoint(body: EstimateToolRequest = Body(openapi_examples=ESTIMATE_EXAMPLES)) -> Estimate:
    """Peak memory per GPU for one training setup, its breakdown, and the fit against a GPU when one is named (no
    config_path over HTTP: give a model name or params_b)."""
    return call_tool("estimate", body)  # type: ignore[return-value]


@router.get("/catalog", response_model=list[Offer], summary="Filter and sort the offers catalog")
def catalog_endpoint(
    gpu: str | None = Query(
        None, max_length=64, description="GPU in any spelling: A100, h100-sxm, 4090.", examples=["H100"]
    ),
    min_vram_gib: float | None = Query(None, ge=0, le=10_000, description="Minimum GiB per GPU."),
    gpu_count: int | None = Query(None, ge=1, le=1024, description="Exactly this many GPUs per instance."),
    min_gpu_count: int | None = Query(None, ge=1, le=1024, description="At least this many GPUs per instance."),
    provider: list[str] | None = Query(None, max_length=20, description="Provider id (repeatable)."),
    region: list[str] | None = Query(None, max_length=20, description="Region or zone (repeatable)."),
    spot_only: bool = Query(False, description="Only offers with a spot price."),
    max_price: float | None = Query(
        None, ge=0, le=1e6, description="USD/hour for the instance (spot price with spot_only)."
    ),
    interconnect: Literal["nvlink", "pcie", "unknown", "none"] | None = Query(None),
    sort: Literal[tuple(SORTS)] = Query("price", description="Sort key."),  # type: ignore[valid-type]
    limit: int = Query(20, ge=1, le=MAX_CATALOG_LIMIT),
    res: AppResources = Depends(app_resources),
) -> list[Offer]:
    """Offers matching every filter given."""
    query = CatalogQuery(
        gpu=gpu,
        min_vram_gib=min_vram_gib,
        gpu_count=gpu_count,
        min_gpu_count=min_gpu_count,
        provider=provider,
        region=region,
        spot_only=spot_only,
        max_price=max_price,
        interconnect=interconnect,
        sort=sort,
        limit=limit,
    )
    return call_tool("catalog_query", query, ToolContext(res.catalog_path)).offers  # type: ignore[attr-defined]


@router.post(
    "/rank", response_model=RankingResult, summary="Offers ranked for a job (JobSpec)", dependencies=[gated(RankJob)]
)
def rank_endpoint(
    body: RankJob = Body(openapi_examples=RANK_EXAMPLES),
    limit: int = Query(10, ge=1, le=50, description="At most this many offers."),
    res: AppResources = Depends(app_resources),
) -> RankingResult:
    """Offers the job fits on, cheapest expected total cost first, with alternatives and exclusion counts."""
    request = RankRequest.model_validate({**body.model_dump(), "limit": limit})
    return call_tool("rank", request, ToolContext(res.catalog_path))  # type: ignore[return-value]


@router.post(
    "/spot",
    response_model=SpotRiskResult,
    summary="Spot versus on-demand for one job",
    dependencies=[gated(SpotRiskRequest)],
)
def spot_endpoint(body: SpotRiskRequest = Body(openapi_examples=SPOT_EXAMPLES)) -> SpotRiskResult:
    """Expected preemptions, checkpoint interval, expected cost and deadline odds, and a verdict."""
    return call_tool("spot_risk", body)  # type: ignore[return-value]


@router.get("/faq", response_model=FaqAnswer, summary="Answer a why/how question from the knowledge base")
def faq_get(
    question: str = Query(min_length=1, max_length=2000, examples=["Posso usare le istanze spot per il fine-tuning?"]),
    language: Language | None = Query(None),
) -> FaqAnswer:
    """Grounded FAQ answer with citations (extractive, offline)."""
    return call_tool("faq_search", FaqSearch(question=question, language=language))  # type: ignore[return-value]


@router.post(
    "/faq", response_model=FaqAnswer, summary="Answer a why/how question (JSON body)", dependencies=[gated(FaqRequest)]
)
def faq_post(body: FaqRequest) -> FaqAnswer:
    """The same as GET /api/faq with a JSON body."""
    return call_tool("faq_search", FaqSearch(question=body.question, language=body.language))  # type: ignore[return-value]


def _tool_endpoint(tool: Tool) -> None:
    """Register POST /api/tools/<name> for one registry tool."""

    def endpoint(body: Any, res: AppResources = Depends(app_resources)) -> BaseModel:
        return call_tool(tool.name, body, ToolContext(res.catalog_path))

    endpoint.__annotations__ = {"body": tool.input_model, "res": AppResources, "return": tool.output_model}
    endpoint.__name__ = f"tool_{tool.name}"
    endpoint.__doc__ = tool.description
    router.post(
        f"/tools/{tool.name}",
        response_model=tool.output_model,
        summary=f"Tool: {tool.name}",
        operation_id=f"tool_{tool.name}",
        dependencies=[gated(tool.input_model)],
    )(endpoint)


for _tool in TOOLS:
    _tool_endpoint(_tool)
