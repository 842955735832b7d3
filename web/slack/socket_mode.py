"""Socket Mode: the same Bolt app over an outbound WebSocket, for teams without a public URL."""

from __future__ import annotations

from typing import Any

from slack_bolt.adapter.socket_mode import SocketModeHandler

from web.slack.bolt_app import create_bolt_app
from web.slack.settings import SlackSettings
from web.slack.store import SlackStore


def socket_mode_handler(
    settings: SlackSettings, advisor: Any, *, store: SlackStore | None = None, **app_options: Any
) -> SocketModeHandler:
    """A Socket Mode handler (not yet connected) for the bot; needs the app-level token."""
    if settings.app_token is None:
        raise ValueError("Socket Mode needs SLACK_APP_TOKEN (an app-level token with connections:write)")
    app = create_bolt_app(settings, advisor, store=store, **app_options)
    return SocketModeHandler(app, settings.app_token.get_secret_value(), web_client=app.client)
