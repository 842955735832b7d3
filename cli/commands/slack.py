"""`gpu-advisor slack --socket`: run the Slack bot over Socket Mode (no public URL needed); `--manifest` prints the
app manifest to create the Slack app from."""

from __future__ import annotations

from pathlib import Path

import typer

from cli.output import UserError, console, print_json

MANIFEST_PATH = Path(__file__).resolve().parents[2] / "slack" / "manifest.yaml"


def manifest_text() -> str:
    """The Slack app manifest in the repository (slack/manifest.yaml)."""
    if not MANIFEST_PATH.exists():
        raise UserError(f"the app manifest is not at {MANIFEST_PATH}; run from a checkout of the repository")
    return MANIFEST_PATH.read_text(encoding="utf-8")


def register(app: typer.Typer) -> None:
    """Add the `slack` command to the CLI."""

    @app.command("slack")
    def slack_command(
        socket: bool = typer.Option(
            False, "--socket", help="Connect over Socket Mode (needs SLACK_BOT_TOKEN and SLACK_APP_TOKEN)."
        ),
        manifest: bool = typer.Option(False, "--manifest", help="Print the Slack app manifest and exit."),
        json_output: bool = typer.Option(False, "--json", help="With --manifest: print it as one JSON document."),
    ) -> None:
        """Run the Slack bot over Socket Mode, or print its app manifest (HTTP events run inside `serve`)."""
        if manifest:
            text = manifest_text()
            if json_output:
                import yaml

                print_json(yaml.safe_load(text))
            else:
                console.out(text, end="")
            return
        if not socket:
            raise UserError(
                "choose --socket to connect over Socket Mode, or set SLACK_BOT_TOKEN and "
                "SLACK_SIGNING_SECRET and run `gpu-advisor serve` for HTTP events at /slack/events"
            )
        from agent.gc_tuning import for_long_running
        from agent.service import Advisor
        from web.slack import load_settings, socket_mode_handler

        settings = load_settings(socket_mode=True)
        advisor = for_long_running(Advisor())
        try:
            if json_output:
                print_json({"mode": "socket", "status": "connecting"})
            else:
                console.print("gpu-advisor Slack bot: connecting over Socket Mode (Ctrl+C to stop)")
            socket_mode_handler(settings, advisor).start()
        finally:
            advisor.close()
