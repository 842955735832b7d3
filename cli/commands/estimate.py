"""`gpu-advisor estimate`: per-GPU peak training memory with its breakdown, fit check and ranked fixes, and with
--gpu the throughput block (layout, tokens/s per GPU, step time, MFU, communication share) on --gpus GPUs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.table import Table

from cli.output import console, key_value_table, print_json
from tools.memory import DEFAULTS

if TYPE_CHECKING:  # the estimator loads when the command runs: --help and other commands stay fast
    from tools.jobtime import ThroughputBlock
    from tools.memory import Estimate


def _render(result: Estimate) -> None:
    """Print an estimate as rich tables."""
    title = f"{result.model_name} · {result.method} · {result.precision}" + (
        " (approximate shape)" if result.approximate else ""
    )
    rows = [
        ("per GPU (nvidia-smi)", f"{result.per_gpu_gib:.2f} GiB"),
        ("allocated peak (torch)", f"{result.allocated_gib:.2f} GiB"),
        ("reserved peak (torch)", f"{result.reserved_gib:.2f} GiB"),
        ("peak phase", result.peak_phase.replace("_", " ")),
        ("parameters", f"{result.total_params:,} total · {result.trainable_params:,} trainable"),
    ]
    if result.host_ram_gib:
        rows.append(("host RAM (offload)", f"{result.host_ram_gib:.1f} GiB"))
    if result.unknown_model:
        console.print(
            f"[yellow]Unknown model '{result.unknown_model}': a generic {result.total_params / 1e9:.3g}B "
            "decoder stood in for it; pass --config with its config.json for an exact estimate.[/yellow]"
        )
    console.print(key_value_table(title, rows))
    breakdown = Table(title="Breakdown at the peak", title_justify="left")
    breakdown.add_column("term")
    breakdown.add_column("GiB", justify="right")
    for name, value in result.breakdown_gib.items():
        breakdown.add_row(name, f"{value:.2f}")
    console.print(breakdown)
    if result.fit is not None:
        fit = result.fit
        verdict = "[green]fits[/green]" if fit.fits else "[red]does not fit[/red]"
        console.print(
            f"{fit.gpu or 'GPU'} with {fit.vram_gib:g} GiB: {verdict} (headroom {fit.headroom_gib:+.2f} GiB);"
            f" largest micro-batch {fit.max_micro_batch_size or 'none'}, longest sequence "
            f"{fit.max_seq_len or 'none'}"
        )
        if fit.fixes:
            fixes = Table(title="Fixes, cheapest first", title_justify="left")
            for column in ("fix", "reaches GiB", "fits"):
                fixes.add_column(column)
            for fix in fit.fixes:
                fixes.add_row(fix.description, f"{fix.per_gpu_gib:.2f}", "yes" if fix.fits else "no")
            console.print(fixes)
    for note in result.assumptions:
        console.print(f"[dim]· {note}[/dim]")
    block = getattr(result, "throughput", None)
    if block is not None:
        _render_throughput(block)


def _render_throughput(block: ThroughputBlock) -> None:
    """Print the throughput block."""
    if not block.runnable:
        console.print(f"[red]{block.gpus}x {block.gpu}: no layout fits ({block.verdict})[/red]")
        return
    layout = block.layout + (f" (TP={block.tensor_parallel})" if (block.tensor_parallel or 1) > 1 else "")
    rows = [
        (
            "layout",
            f"{layout}, micro-batch {block.micro_batch_size}, gradient checkpointing "
            f"{'on' if block.gradient_checkpointing else 'off'}",
        ),
        ("tokens/s per GPU", f"{block.tokens_per_s_per_gpu:,.0f} ({block.tokens_per_s:,.0f} in all)"),
        (
            "step time",
            f"{block.step_time_s:.3f} s per micro-step, {block.optimizer_step_s:.2f} s per optimizer "
            f"step ({block.gradient_accumulation_steps} micro-steps)",
        ),
        ("MFU / HFU", f"{block.mfu:.0%} / {block.hfu:.0%}" if block.mfu is not None else "unknown"),
        ("communication", f"{block.comm_share:.0%} of each step" if block.comm_share is not None else "-"),
    ]
    console.print(key_value_table(f"Throughput on {block.gpus}x {block.gpu}", rows))
    for name, source in block.sources.items():
        console.print(f"[dim]· {name}: {source}[/dim]")


def estimate_command(
    model: str | None = typer.Option(None, "--model", help="Registry name or HF id, e.g. llama-3.1-8b."),
    config: str | None = typer.Option(None, "--config", help="Path to a HuggingFace config.json."),
    params_b: float | None = typer.Option(None, "--params-b", help="Size in billions for an unknown model."),
    method: str | None = typer.Option(None, "--method", help="pretrain, full_finetune (default), lora or qlora."),
    precision: str | None = typer.Option(None, "--precision", help="fp32, amp_bf16, amp_fp16, bf16 or fp16."),
    optimizer: str | None = typer.Option(
        None, "--optimizer", help="adamw (default), adamw_8bit, paged_adamw_8bit, sgd or adafactor."
    ),
    optimizer_impl: str | None = typer.Option(
        None, "--optimizer-impl", help="AdamW kernel: fused (default, HF Trainer), foreach or for_loop."
    ),
    micro_batch_size: int | None = typer.Option(
        None, "--micro-batch-size", help=f"Sequences per GPU per step (default {DEFAULTS.micro_batch_size})."
    ),
    seq_len: int | None = typer.Option(None, "--seq-len", help=f"Tokens per sequence (default {DEFAULTS.seq_len})."),
    gradient_checkpointing: bool | None = typer.Option(
        None, "--gradient-checkpointing/--no-gradient-checkpointing", help="Default on (the usual recipe)."
    ),
    flash_attention: bool | None = typer.Option(None, "--flash-attention/--no-flash-attention", help="Default on."),
    lora_rank: int | None = typer.Option(None, "--lora-rank", help=f"Default {DEFAULTS.lora_rank}."),
    lora_targets: str | None = typer.Option(None, "--lora-targets", help="all-linear (default) or q_proj,v_proj,..."),
    qlora_upcast: bool | None = typer.Option(
        None,
        "--qlora-upcast/--no-qlora-upcast",
        help="QLoRA with peft's prepare_model_for_kbit_training fp32 upcast (default: the upcast, or TRL's bf16 "
        "casting where the upcast would need more than LoRA).",
    ),
    gpus: int = typer.Option(1, "--gpus", help="Number of GPUs."),
    sharding: str | None = typer.Option(
        None, "--sharding", help="none, ddp, zero1, zero2, zero3 or fsdp (default: fsdp on several GPUs)."
    ),
    tensor_parallel: int = typer.Option(1, "--tensor-parallel"),
    pipeline_parallel: int = typer.Option(1, "--pipeline-parallel"),
    offload: str = typer.Option("none", "--offload", help="none, optimizer or optimizer+params."),
    loss: str | None = typer.Option(None, "--loss", help="fp32 (default, HF upcast), half or fused (Liger/CCE)."),
    gpu: str | None = typer.Option(None, "--gpu", help="Check the fit on this GPU, e.g. A100-80GB."),
    vram_gib: float | None = typer.Option(None, "--vram-gib", help="Check the fit against this many GiB."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    """Estimate per-GPU peak memory for a training or fine-tuning job (the chat's defaults fill what is not given)."""
    from tools.memory import estimate, request_with_defaults

    request, filled = request_with_defaults(
        {
            "model": model,
            "config_path": config,
            "params_b": params_b,
            "method": method,
            "precision": precision,
            "optimizer": optimizer,
            "optimizer_impl": optimizer_impl,
            "micro_batch_size": micro_batch_size,
            "seq_len": seq_len,
            "gradient_checkpointing": gradient_checkpointing,
            "flash_attention": flash_attention,
            "lora_rank": lora_rank,
            "lora_targets": lora_targets,
            "qlora_upcast": qlora_upcast,
            "num_gpus": gpus,
            "sharding": sharding,
            "tensor_parallel": tensor_parallel,
            "pipeline_parallel": pipeline_parallel,
            "offload": offload,
            "loss": loss,
            "gpu": gpu,
            "vram_gib": vram_gib,
        }
    )
    result = estimate(request)
    result.assumptions = filled + result.assumptions
    if gpu is not None:
        from tools.jobtime import EstimateWithThroughput, throughput_block

        block = throughput_block(request, gpu=gpu, gpus=gpus)
        result = EstimateWithThroughput(**result.model_dump(), throughput=block)
    if as_json:
        print_json(result)
    else:
        _render(result)


def register(app: typer.Typer) -> None:
    """Add the `estimate` command."""
    app.command("estimate")(estimate_command)
