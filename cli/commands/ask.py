"""`gpu-advisor ask QUESTION`: answer a why/how question from the knowledge base, with citations."""

from __future__ import annotations

import typer
from rich.panel import Panel

from cli.output import console, print_json


def register(app: typer.Typer) -> None:
    """Add the `ask` command to the CLI."""

    @app.command("ask")
    def ask_command(
        question: str = typer.Argument(..., help="The question, in Italian, Indonesian or English."),
        lang: str | None = typer.Option(None, "--lang", help="Answer in this language: it, id or en."),
        json_output: bool = typer.Option(False, "--json", help="Print {language, answer, citations} as JSON."),
        offline: bool = typer.Option(False, "--offline", help="Never call an LLM, even when one is configured."),
    ) -> None:
        """Answer from the FAQ knowledge base (extractive offline; an LLM, if configured, only rephrases)."""
        from agent.faq_answer import answer_question, llm_rephraser  # on use: keeps `--help` fast
        from agent.llm import llm_configured, make_client, model_name

        rephraser = None
        if not offline and llm_configured():
            rephraser = llm_rephraser(make_client(), model_name())
        result = answer_question(question, lang=lang, rephraser=rephraser)
        if json_output:
            print_json(result)
            return
        console.print(Panel(result.answer, title=f"answer ({result.language})", title_align="left"))
        for citation in result.citations:
            console.print(f"[bold]{citation.id}[/bold]  {citation.title}")
