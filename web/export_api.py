"""POST /api/export/skypilot: a chat turn's recommendation as a SkyPilot task file (the widget's download)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from agent.export import ExportError, build_task, exported_offer
from contract.languages import Language
from web.blocking import run_blocking
from web.body_gate import gated
from web.deps import AppResources, app_resources

router = APIRouter(tags=["export"])


class TurnForExport(BaseModel):
    """The parts of a chat result (`/api/chat`'s response) that the task is built from; other keys are ignored."""

    model_config = ConfigDict(extra="ignore")

    language: Language = "en"
    spec: dict[str, Any] = Field(default_factory=dict, description="The turn's job spec.")
    estimate: dict[str, Any] | None = Field(default=None, description="The turn's memory estimate.")
    offers: list[dict[str, Any]] = Field(
        min_length=1,
        max_length=50,
        description="Ranked offers; the first is exported, or, when SkyPilot cannot "
        "launch its cloud, the best launchable one (see `note`).",
    )
    catalog: dict[str, Any] | None = Field(default=None, description="Catalog snapshot information.")


class SkyPilotExport(BaseModel):
    """The task file and how to launch it."""

    filename: str = Field(description="Suggested file name.")
    yaml: str = Field(description="The SkyPilot task, commented in the conversation's language.")
    launch_command: str = Field(description="`sky jobs launch task.yaml` (spot) or `sky launch ...` (on-demand).")
    required_env: list[str] = Field(description="Variables to pass at launch with --env NAME=....")
    offer: dict[str, Any] = Field(
        description="The offer the task launches (provider, instance type, region, GPUs, "
        "spot, expected cost and hours)."
    )
    note: str | None = Field(
        default=None,
        description="When SkyPilot cannot launch the recommended offer's cloud: "
        "which offer the task uses instead and why, in the turn's "
        "language.",
    )


@router.post("/api/export/skypilot", response_model=SkyPilotExport, dependencies=[gated(TurnForExport)])
async def export_skypilot(turn: TurnForExport, res: AppResources = Depends(app_resources)) -> SkyPilotExport:
    """The recommended offer of a chat result as a SkyPilot task (422 when the offer cannot be exported)."""
    return await run_blocking(res.executor, _export, turn, res.catalog_path)


def _export(turn: TurnForExport, catalog_path: object) -> SkyPilotExport:
    """Build the task (may read the catalog for SkyPilot's accelerator name)."""
    try:
        task = build_task(turn.model_dump(), db_path=catalog_path)
    except ExportError:
        raise
    except (KeyError, TypeError, AttributeError, ValueError, ArithmeticError) as error:
        raise ExportError(
            f"the result cannot be exported: a field of its first offer is missing or malformed "
            f"({type(error).__name__}: {error})"
        ) from error
    return SkyPilotExport(
        filename="task.yaml",
        yaml=task.yaml,
        launch_command=task.launch_command,
        required_env=task.required_env,
        offer=exported_offer(task.offer),
        note=task.note,
    )
