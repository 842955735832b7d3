"""`gpu-advisor rank` (offers ranked by total job cost for a JobSpec) and `gpu-advisor spot` (spot or on-demand)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table

from cli.output import UserError, console, key_value_table, print_json

if TYPE_CHECKING:  # the ranking, the tool registry (FAQ index, numpy) load when a command runs, not for --help
    from tools.ranking import RankingResult


RANK_LIMIT = 50
"""The registry's rank tool returns at most this many offers."""


def _read_spec(source: str) -> dict[str, Any]:
    """A JobSpec as a dict from '-' (stdin) or a file path."""
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except OSError as error:
        raise UserError(f"cannot read spec '{source}': {error.strerror or error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise UserError(f"spec is not valid JSON (line {error.lineno}: {error.msg})") from None
    if not isinstance(data, dict):
        raise UserError("spec must be a JSON object")
    return data


def _render(result: RankingResult) -> None:
    """Print the ranking as a rich table plus alternatives, exclusions and assumptions."""
    table = Table(title=f"{result.model_id} · {result.method} · {result.tokens:,.0f} tokens", title_justify="left")
    for column in ("#", "provider", "instance", "GPUs", "region", "pricing", "$/h", "hours", "cost $", "layout"):
        table.add_column(column)
    for i, offer in enumerate(result.offers, 1):
        gpus = f"{offer.total_gpus}× {offer.gpu}" + (f" ({offer.nodes} nodes)" if offer.nodes > 1 else "")
        table.add_row(
            str(i),
            offer.provider,
            offer.instance_type,
            gpus,
            offer.region or "",
            "spot" if offer.spot else "on-demand",
            f"{offer.price_per_hour:,.2f}",
            f"{offer.est_hours:,.1f}",
            f"{offer.est_cost:,.2f}",
            offer.layout or "",
        )
    console.print(table)
    rows = []
    if result.cheapest_that_fits:
        c = result.cheapest_that_fits
        rows.append(("cheapest that fits", f"{c.provider} {c.instance_type}: ${c.est_cost:,.2f}, {c.est_hours:,.1f} h"))
    if result.fastest:
        f = result.fastest
        rows.append(("fastest", f"{f.provider} {f.instance_type}: {f.est_hours:,.2f} h, ${f.est_cost:,.2f}"))
    if result.budget_usd is not None:
        rows.append(
            (
                "budget",
                f"${result.budget_usd:,.2f}"
                + (f" (1 {result.fx.from_currency} = {result.fx.rate:.6g} USD, {result.fx.date})" if result.fx else ""),
            )
        )
    rows.append(("excluded", ", ".join(f"{k}: {v}" for k, v in result.excluded.items()) or "none"))
    console.print(key_value_table("Alternatives and exclusions", rows))
    for note in result.assumptions:
        console.print(f"[dim]· {note}[/dim]")


def rank_command(
    spec_source: str | None = typer.Option(None, "--spec", help="JobSpec JSON: a file path, or '-' for stdin."),
    model: str | None = typer.Option(None, "--model", help="Registry name, e.g. llama-3.1-8b."),
    params_b: float | None = typer.Option(None, "--params-b", help="Model size in billions of parameters."),
    method: str | None = typer.Option(None, "--method", help="pretrain, full_finetune, lora or qlora."),
    seq_len: int | None = typer.Option(None, "--seq-len"),
    micro_batch_size: int | None = typer.Option(None, "--micro-batch-size"),
    gradient_checkpointing: bool | None = typer.Option(None, "--gradient-checkpointing/--no-gradient-checkpointing"),
    gpus: int | None = typer.Option(None, "--gpus", help="GPU count wanted."),
    gpu: str | None = typer.Option(None, "--gpu", help="GPU wanted, e.g. H100 or A100-80GB."),
    budget: float | None = typer.Option(None, "--budget", help="Money for the whole job."),
    currency: str = typer.Option("USD", "--currency", help="USD, EUR or IDR."),
    deadline_hours: float | None = typer.Option(None, "--deadline-hours"),
    spot: bool | None = typer.Option(None, "--spot/--no-spot", help="Allow or forbid spot capacity."),
    provider: list[str] | None = typer.Option(None, "--provider", help="Provider wanted (repeatable)."),
    region: list[str] | None = typer.Option(None, "--region", help="Region wanted (repeatable)."),
    dataset_tokens: int | None = typer.Option(None, "--dataset-tokens"),
    dataset_examples: int | None = typer.Option(None, "--dataset-examples"),
    epochs: float | None = typer.Option(None, "--epochs"),
    limit: int = typer.Option(10, "--limit", min=0, help="Offers to list."),
    db: str | None = typer.Option(None, "--db", help="Catalog database (default: the shipped snapshot's)."),
    fx_rates: str | None = typer.Option(None, "--fx-rates", help="Exchange-rate JSON overriding the shipped one."),
    preemption_rate: float | None = typer.Option(None, "--preemption-rate", help="Spot preemptions per hour."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    """Rank catalog offers for a job by expected total cost."""
    from agent.toolbox import ToolContext, call_tool
    from tools.ranking import rank_offers

    data: dict[str, Any] = _read_spec(spec_source) if spec_source else {"language": "en"}
    flags = {
        "model": model,
        "params_b": params_b,
        "method": method,
        "seq_len": seq_len,
        "micro_batch_size": micro_batch_size,
        "gradient_checkpointing": gradient_checkpointing,
        "num_gpus": gpus,
        "gpu": gpu,
        "deadline_hours": deadline_hours,
        "interruptible_ok": spot,
        "providers": provider or None,
        "regions": region or None,
        "dataset_tokens": dataset_tokens,
        "dataset_examples": dataset_examples,
        "epochs": epochs,
    }
    data.update({k: v for k, v in flags.items() if v is not None})
    if budget is not None:
        data["budget"] = {"amount": budget, "currency": currency.upper()}
    if fx_rates is None and preemption_rate is None and 1 <= limit <= RANK_LIMIT:
        # the registry's rank tool: the same input model and function as /api/tools/rank, MCP and the LLM's calls
        result = call_tool("rank", {**data, "limit": limit}, ToolContext(Path(db) if db else None))
    else:  # local-only options (rate files, a preemption rate, an unusual limit) go straight to the ranking
        from contract.jobspec import JobSpec

        spec = JobSpec.model_validate(data)
        result = rank_offers(spec, db_path=db, limit=limit, fx_rates=fx_rates, preemption_rate_per_hour=preemption_rate)
    if as_json:
        print_json(result)
    else:
        _render(result)


def spot_command(
    job_hours: float = typer.Option(..., "--job-hours", help="Uninterrupted run time."),
    spot_price: float | None = typer.Option(None, "--spot-price", help="Spot USD per hour."),
    on_demand_price: float | None = typer.Option(None, "--on-demand-price", help="On-demand USD per hour."),
    preemption_rate: float | None = typer.Option(None, "--preemption-rate", help="Preemptions per hour."),
    provider: str | None = typer.Option(None, "--provider"),
    checkpoint_s: float = typer.Option(60.0, "--checkpoint-seconds", help="Checkpoint write time."),
    restart_s: float = typer.Option(600.0, "--restart-seconds", help="Restart overhead per preemption."),
    granularity_s: float = typer.Option(1.0, "--billing-granularity-seconds"),
    minimum_s: float = typer.Option(0.0, "--billing-minimum-seconds"),
    deadline_hours: float | None = typer.Option(None, "--deadline-hours"),
    on_notice: bool = typer.Option(False, "--checkpoint-on-notice", help="Save when the preemption notice arrives."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    """Spot or on-demand for one job: checkpoint interval, expected time and cost, deadline odds."""
    from agent.toolbox import call_tool
    from tools.spot import SpotRiskRequest

    result = call_tool(
        "spot_risk",
        SpotRiskRequest(
            job_hours=job_hours,
            spot_price_per_hour=spot_price,
            on_demand_price_per_hour=on_demand_price,
            preemption_rate_per_hour=preemption_rate,
            provider=provider,
            checkpoint_write_s=checkpoint_s,
            restart_overhead_s=restart_s,
            billing_granularity_s=granularity_s,
            billing_minimum_s=minimum_s,
            deadline_hours=deadline_hours,
            checkpoint_on_notice=on_notice,
        ),
    )
    if as_json:
        print_json(result)
        return
    rows = [
        ("verdict", f"{result.verdict} ({result.reason.replace('_', ' ')})"),
        ("saving", f"${result.savings_usd:,.2f}" if result.savings_usd is not None else "n/a"),
        (
            "checkpoint every",
            f"{result.checkpoint_interval_hours * 60:.1f} min"
            if result.checkpoint_interval_hours
            else "no periodic checkpoint",
        ),
        ("expected spot hours", f"{result.expected_spot_hours:,.2f} ({result.expected_preemptions:.2f} preemptions)"),
        ("expected spot cost", f"${result.expected_spot_cost_usd:,.2f}" if result.expected_spot_cost_usd else "n/a"),
        ("on-demand cost", f"${result.on_demand_cost_usd:,.2f}" if result.on_demand_cost_usd else "n/a"),
        (
            "P(spot done by deadline)",
            f"{result.p_spot_done_by_deadline:.1%}" if result.p_spot_done_by_deadline is not None else "no deadline",
        ),
    ]
    console.print(key_value_table("Spot or on-demand", rows))
    for note in result.assumptions:
        console.print(f"[dim]· {note}[/dim]")


def register(app: typer.Typer) -> None:
    """Add `rank` and `spot` to the CLI."""
    app.command("rank")(rank_command)
    app.command("spot")(spot_command)
