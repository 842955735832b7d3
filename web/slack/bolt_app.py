"""Build the Bolt app: credentials from settings, signature verification on, listeners registered."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient

from web.slack.answering import SlackAnswerer
from web.slack.listeners import register
from web.slack.settings import SlackSettings
from web.slack.store import SlackStore, open_store


def create_bolt_app(
    settings: SlackSettings,
    advisor: Any,
    *,
    store: SlackStore | None = None,
    api_url: str | None = None,
    authorize: Callable[..., Any] | None = None,
) -> App:
    """A Bolt app answering with `advisor`, its Web API client pointed at `api_url` (else the settings', else
    Slack's).

    With `authorize` (tests, multi-workspace installs) the token comes from it and no auth.test is made; otherwise
    the bot token is used and checked lazily on the first request, so building the app needs no network."""
    base_url = api_url or settings.api_url or WebClient.BASE_URL
    token = None if authorize is not None else settings.bot_token.get_secret_value()
    secret = settings.signing_secret.get_secret_value() if settings.signing_secret else ""
    app = App(
        client=WebClient(token=token, base_url=base_url),
        signing_secret=secret,
        authorize=authorize,
        request_verification_enabled=True,
        token_verification_enabled=False,
        process_before_response=False,
        name="gpu-advisor",
    )
    register(app, SlackAnswerer(advisor, store or open_store(), tables=settings.tables))
    return app
