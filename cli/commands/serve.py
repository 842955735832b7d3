"""`gpu-advisor serve`: run the HTTP API and the widget's demo page with uvicorn."""

from __future__ import annotations

import os

import typer

from cli.output import console, print_json


def _urls(host: str, port: int) -> dict[str, str]:
    """Where the API, the demo page and the docs are, as a browser on this machine reaches them."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else ("[::1]" if host == "::" else host)
    shown = f"[{shown}]" if ":" in shown and not shown.startswith("[") else shown
    base = f"http://{shown}:{port}"
    return {"api": base, "demo": f"{base}/demo", "docs": f"{base}/docs", "widget": f"{base}/widget/widget.js"}


def _check_slack_credentials() -> None:
    """With Slack configured, reject malformed tokens here (one line) rather than in the server's startup."""
    from web.slack import load_settings, slack_configured

    if slack_configured():
        load_settings(socket_mode=False)


def register(app: typer.Typer) -> None:
    """Add the `serve` command to the CLI."""

    @app.command("serve")
    def serve_command(
        host: str | None = typer.Option(
            None, "--host", envvar="GPU_ADVISOR_HOST", help="Interface to listen on (default 127.0.0.1)."
        ),
        port: int | None = typer.Option(None, "--port", envvar="GPU_ADVISOR_PORT", help="TCP port (default 8000)."),
        workers: int | None = typer.Option(
            None,
            "--workers",
            envvar="GPU_ADVISOR_WORKERS",
            help="Worker processes (default: one per core; 1 for a single process). They share threads, turn locks "
            "and the rate limit (across machines with "
            "GPU_ADVISOR_DATABASE_URL).",
        ),
        allowed_origins: str | None = typer.Option(
            None,
            "--allowed-origins",
            envvar="GPU_ADVISOR_ALLOWED_ORIGINS",
            help="Comma-separated origins of the sites that embed the widget, e.g. https://docs.example.com.",
        ),
        json_output: bool = typer.Option(False, "--json", help="Print the URLs as one JSON document, then serve."),
    ) -> None:
        """Serve the chat API (/api/chat, /api/chat/stream), the tool endpoints, /docs and a widget demo page."""

        from web.settings import ServerSettings

        settings = ServerSettings.from_env(host=host, port=port, workers=workers, allowed_origins=allowed_origins)
        _check_slack_credentials()
        from web.serving import check_listen_address, uvicorn_proxy_options

        check_listen_address(settings.host, settings.port)  # a bad --host or a busy port: one line, exit 2
        from web.serving import check_thread_storage

        check_thread_storage(settings)  # a read-only data folder: one line, exit 2
        if settings.database_url:  # an unreachable PostgreSQL: one line, exit 2 (password never shown)
            from agent.threads import check_connection

            check_connection(settings.database_url)
        proxy_options = uvicorn_proxy_options()  # X-Forwarded-For only from $GPU_ADVISOR_TRUSTED_PROXIES
        from web.serving import HeaderDeadlineProtocol, header_timeout_s

        header_timeout_s()  # an unusable $GPU_ADVISOR_HEADER_TIMEOUT_S: one line, exit 2
        urls = _urls(settings.host, settings.port)
        if json_output:
            print_json(
                {
                    "urls": urls,
                    "workers": settings.workers,
                    "allowed_origins": settings.allowed_origins,
                    "threads": "postgresql" if settings.database_url else "sqlite",
                }
            )
        else:
            console.print(f"gpu-advisor API on {urls['api']}  ·  docs {urls['docs']}")
            console.print(f"Widget demo page: [bold]{urls['demo']}[/bold]")
        os.environ.update(settings.to_env())  # worker processes rebuild the same settings from the environment
        if (
            settings.workers > 1
        ):  # workers exit when this process dies, even by kill -9 (web/serving/worker_watchdog.py)
            from web.serving import MASTER_PID_VAR

            os.environ[MASTER_PID_VAR] = str(os.getpid())
        from web.serving import run_workers  # each worker on its own socket: connections spread over them

        run_workers(
            "cli.worker_app:create_app",
            factory=True,
            host=settings.host,
            port=settings.port,
            workers=settings.workers,
            log_level="warning" if json_output else "info",
            http=HeaderDeadlineProtocol,
            **proxy_options,
        )  # headers within the bound (slowloris)
