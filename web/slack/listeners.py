"""Bolt wiring, kept thin: replay refusal, event de-duplication, then one listener per Slack input that hands over
to the answerer."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from slack_bolt import Ack, App, BoltRequest, BoltResponse, Respond
from slack_sdk import WebClient

from web.slack.answering import SlackAnswerer, workspace_of
from web.slack.i18n import text
from web.slack.store import SlackStore

BUTTON_ACTIONS = re.compile(r"^gpu_(cheaper|faster|no_spot|skypilot)$")
COMMAND = "/gpu"


def refuse_replays(store: SlackStore) -> Callable[..., Any]:
    """Global middleware (after Bolt's signature check): a signed request seen before is a replay. Slack never sends
    one request twice (its event retries are handled by `skip_answered_events`), so a repeated slash command or
    button click is refused with 401 and answered once; a repeated event delivery is acknowledged without a retry."""

    def middleware(req: BoltRequest, body: dict[str, Any], next: Callable[[], BoltResponse]) -> BoltResponse | None:
        """Remember the signature; stop here if it was seen within the replay window."""
        signature = (req.headers.get("x-slack-signature") or [""])[0]
        if not signature or store.first_delivery(signature):
            return next()
        if body.get("type") == "event_callback":
            return BoltResponse(status=200, body="", headers={"x-slack-no-retry": "1"})
        return BoltResponse(status=401, body="replayed request")

    return middleware


def skip_answered_events(store: SlackStore) -> Callable[..., Any]:
    """Global middleware: an Events API delivery whose event_id was already handled (Slack's X-Slack-Retry-Num
    retries) is acknowledged with X-Slack-No-Retry and never reaches a listener."""

    def middleware(body: dict[str, Any], next: Callable[[], BoltResponse]) -> BoltResponse | None:
        """Claim the event id; stop here if it was claimed before."""
        event_id = body.get("event_id") if body.get("type") == "event_callback" else None
        if event_id and not store.claim(f"event:{event_id}"):
            return BoltResponse(status=200, body="", headers={"x-slack-no-retry": "1"})
        return next()

    return middleware


def register(app: App, answerer: SlackAnswerer) -> None:
    """Attach the middleware and listeners to a Bolt app."""
    app.middleware(refuse_replays(answerer.store))
    app.middleware(skip_answered_events(answerer.store))

    @app.event("app_mention")
    def on_mention(event: dict[str, Any], client: WebClient, context: dict[str, Any]) -> None:
        """A mention in a channel: answer in the mention's thread."""
        answerer.answer_message(event, client, workspace_of(context))

    @app.event("message")
    def on_message(event: dict[str, Any], client: WebClient, context: dict[str, Any]) -> None:
        """A DM, or a follow-up in a thread the bot answers in."""
        if answerer.should_answer(event, context.get("bot_user_id"), workspace_of(context)):
            answerer.answer_message(event, client, workspace_of(context))

    @app.command(COMMAND)
    def on_command(ack: Ack, command: dict[str, Any], respond: Respond, client: WebClient) -> None:
        """Acknowledge at once with 'working on it', then answer through the response_url."""
        ack(text=text("working", answerer.command_language(command)), response_type="ephemeral")
        answerer.answer_command(command, respond, client)

    @app.action(BUTTON_ACTIONS)
    def on_button(
        ack: Ack,
        body: dict[str, Any],
        action: dict[str, Any],
        client: WebClient,
        respond: Respond,
        context: dict[str, Any],
    ) -> None:
        """Cheaper / faster / no spot: acknowledge, then re-run the job with that change."""
        ack()
        answerer.answer_button(body, action, client, respond, workspace_of(context))
