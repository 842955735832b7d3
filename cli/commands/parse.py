"""`gpu-advisor parse TEXT`: show the JobSpec a chat message turns into."""

from __future__ import annotations

import typer

from cli.output import console, key_value_table, print_json


def register(app: typer.Typer) -> None:
    """Add the `parse` command to the CLI."""

    @app.command("parse")
    def parse_command(
        text: str = typer.Argument(..., help="The chat message, in Italian, Indonesian or English."),
        lang: str | None = typer.Option(None, "--lang", help="Force the language: it, id or en."),
        json_output: bool = typer.Option(False, "--json", help="Print the JobSpec as one JSON document."),
        details: bool = typer.Option(
            False, "--details", help="With --json: wrap the spec with mentioned fields, parser and language."
        ),
        offline: bool = typer.Option(False, "--offline", help="Never call an LLM, even when one is configured."),
    ) -> None:
        """Parse a job description into a JobSpec (offline parser, or an LLM when one is configured)."""
        # imported on use: keeps --help and other commands fast
        from agent.parsing import parse_message

        if not text.strip():
            raise ValueError('the message is empty; describe the job, e.g. "LoRA on Llama 3 8B with 2 A100"')
        result = parse_message(text, lang=lang, use_llm=False if offline else None)
        if json_output:
            if details:
                print_json(
                    {
                        "spec": result.spec,
                        "mentioned": result.mentioned,
                        "parser": result.parser,
                        "fallback_reason": result.fallback_reason,
                        "language": result.language,
                        "assumptions": result.assumptions,
                    }
                )
            else:
                print_json(result.spec)
            return
        rows = [(name, value) for name, value in result.spec.model_dump(mode="json").items() if value is not None]
        console.print(key_value_table("JobSpec", rows))
        note = f"parser: {result.parser}; language: {result.language.language} ({result.language.source})"
        if result.fallback_reason:
            note += f"; LLM not used: {result.fallback_reason}"
        console.print(note)
        for assumption in result.assumptions:
            console.print(f"assumed: {assumption}")
