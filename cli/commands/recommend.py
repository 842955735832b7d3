"""`gpu-advisor recommend` (one turn, JSON or rich) and `gpu-advisor chat` (interactive, threads, streaming)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Optional

import typer
from rich.markdown import Markdown
from rich.table import Table

from cli.output import console, print_json

if TYPE_CHECKING:
    from agent.service import Advisor

EXIT_WORDS = frozenset({"exit", "quit", "esci", "keluar", ":q"})


def _offers_table(result: dict[str, Any]) -> Table | None:
    """The ranked offers as a table."""
    offers = result.get("offers") or []
    if not offers:
        return None
    table = Table(title="Offers", title_justify="left")
    for column in ("provider", "instance", "GPUs", "$/h", "hours", "total $", "spot"):
        table.add_column(column, justify="right" if column in ("GPUs", "$/h", "hours", "total $") else "left")
    for offer in offers[:5]:
        table.add_row(offer["provider"], offer["instance_type"], f"{offer['total_gpus']}× {offer['gpu']}",
                      f"{offer['price_per_hour']:.2f}", f"{offer['est_hours']:.1f}", f"{offer['est_cost']:.2f}",
                      "yes" if offer["spot"] else "no")
    return table


def render_turn(result: dict[str, Any]) -> None:
    """Print one turn's answer for people: markdown text, the offers table, notes."""
    console.print(Markdown(result["answer"]))
    table = _offers_table(result)
    if table is not None:
        console.print(table)
    for note in result.get("notes") or []:
        console.print(f"[dim]{note}[/dim]")


def recommend_command(
    text: str = typer.Argument(..., help="The request, e.g. 'QLoRA su Llama 3 70B, budget 300 euro'."),
    thread: Optional[str] = typer.Option(None, "--thread", help="Continue this conversation."),
    lang: Optional[str] = typer.Option(None, "--lang", help="Answer in it, id or en."),
    prefer: Optional[str] = typer.Option(None, "--prefer", help="cost or speed: which offer to recommend first."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
) -> None:
    """One turn: parse the request, size it, rank real offers and answer with sources."""
    from agent.service import Advisor  # imported on use: keeps `gpu-advisor --help` fast

    advisor = Advisor()
    try:
        result = advisor.respond(text, thread_id=thread, language=lang, prefer=prefer)
    finally:
        advisor.close()
    if as_json:
        print_json(result)
    else:
        render_turn(result)
        console.print(f"[dim]thread {result['thread_id']}[/dim]")


def _chat_turn(advisor: Advisor, text: str, thread: str | None, lang: str | None) -> dict[str, Any] | None:
    """Run one streamed turn with a progress line; returns the result or None after an error."""
    streamed: list[str] = []
    with console.status("…") as status:
        for event in advisor.stream(text, thread_id=thread, language=lang):
            if event["type"] == "progress":
                status.update(event["label"])
            elif event["type"] == "delta":
                streamed.append(event["text"])
            elif event["type"] == "error":
                console.print(f"[red]{event['message']} (error id {event['error_id']})[/red]")
                return None
            elif event["type"] == "final":
                return event["result"]
    return None


def chat_command(
    thread: Optional[str] = typer.Option(None, "--thread", help="Resume this conversation."),
    lang: Optional[str] = typer.Option(None, "--lang", help="Answer in it, id or en."),
) -> None:
    """Chat with the advisor; the conversation is kept and can be resumed with --thread."""
    from agent.service import Advisor  # imported on use: keeps `gpu-advisor --help` fast

    advisor = Advisor()
    interactive = sys.stdin.isatty()
    if interactive:
        console.print("[bold]gpu-advisor[/bold] — describe your training job (it / id / en). 'exit' to leave.")
    try:
        while True:
            try:
                text = console.input("[bold cyan]> [/bold cyan]") if interactive else sys.stdin.readline()
            except (EOFError, KeyboardInterrupt):
                break
            if not interactive and text == "":
                break
            text = text.strip()
            if not text:
                continue
            if text.lower() in EXIT_WORDS:
                break
            result = _chat_turn(advisor, text, thread, lang)
            if result is None:
                continue
            thread = result["thread_id"]
            render_turn(result)
    finally:
        advisor.close()
    if thread:
        console.print(f"[dim]resume with: gpu-advisor chat --thread {thread}[/dim]")


def register(app: typer.Typer) -> None:
    """Add the `recommend` and `chat` commands."""
    app.command("recommend")(recommend_command)
    app.command("chat")(chat_command)
