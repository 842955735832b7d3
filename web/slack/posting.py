"""Where an answer goes: a Slack thread through the Web API ('working on it' posted, then updated in place), or a
slash command / ephemeral button's response_url. Both validate every message before sending it."""

from __future__ import annotations

from typing import Any, Protocol

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from web.slack.blockkit import SlackMessage, validate

REJECTED_BLOCKS = ("invalid_blocks", "invalid_blocks_format")
"""Slack error codes meaning 'these blocks are not accepted here' (e.g. a client without table blocks)."""


class DeliveryError(RuntimeError):
    """Slack refused a message; `code` is Slack's error code."""

    def __init__(self, code: str) -> None:
        """Keep Slack's error code."""
        super().__init__(f"Slack refused the message: {code}")
        self.code = code

    @property
    def blocks_rejected(self) -> bool:
        """Whether Slack rejected the blocks themselves (worth retrying with simpler blocks)."""
        return self.code in REJECTED_BLOCKS


class Poster(Protocol):
    """Sends a 'working on it' message and then the answer messages."""

    def working(self, message: SlackMessage) -> None:
        """Show that the answer is on its way."""

    def deliver(self, messages: list[SlackMessage]) -> None:
        """Show the answer (replacing the 'working' message where possible)."""


def _payload(message: SlackMessage) -> dict[str, Any]:
    """Keyword arguments for a Web API or response_url call."""
    validate(message)
    return {"text": message.text, "blocks": message.blocks}


class ThreadPoster:
    """Posts into one Slack thread with chat.postMessage and replaces its own messages with chat.update."""

    def __init__(self, client: WebClient, channel: str, thread_ts: str) -> None:
        """Post into `thread_ts` of `channel` with `client`."""
        self.client, self.channel, self.thread_ts = client, channel, thread_ts
        self.posted: list[str] = []
        """ts of the messages this poster owns, in order; a re-delivery updates them in place."""

    def _post(self, message: SlackMessage) -> str:
        """chat.postMessage into the thread; returns the new message's ts."""
        try:
            response = self.client.chat_postMessage(
                channel=self.channel,
                thread_ts=self.thread_ts,
                unfurl_links=False,
                unfurl_media=False,
                **_payload(message),
            )
        except SlackApiError as error:
            raise DeliveryError(str(error.response.get("error", "unknown"))) from None
        return str(response["ts"])

    def _update(self, ts: str, message: SlackMessage) -> None:
        """chat.update of one of this poster's messages."""
        try:
            self.client.chat_update(channel=self.channel, ts=ts, **_payload(message))
        except SlackApiError as error:
            raise DeliveryError(str(error.response.get("error", "unknown"))) from None

    def working(self, message: SlackMessage) -> None:
        """Post the 'working on it' message that the answer will replace."""
        self.posted.append(self._post(message))

    def deliver(self, messages: list[SlackMessage]) -> None:
        """Update this poster's messages in order with the answer; post more when the answer needs more."""
        for i, message in enumerate(messages):
            if i < len(self.posted):
                self._update(self.posted[i], message)
            else:
                self.posted.append(self._post(message))


class Responder(Protocol):
    """Bolt's `respond` (a response_url client)."""

    def __call__(self, **kwargs: Any) -> Any:
        """POST a message to the response_url."""


class ResponseUrlPoster:
    """Answers through a response_url: the first message replaces the original (or not), the rest follow."""

    def __init__(self, respond: Responder, *, replace_original: bool) -> None:
        """Use `respond`; replace the original message with the first answer message when asked."""
        self.respond, self.replace_original = respond, replace_original
        self.sent = 0

    def _send(self, message: SlackMessage, replace: bool) -> None:
        """One response_url POST; DeliveryError when Slack answers with an error."""
        response = self.respond(response_type="ephemeral", replace_original=replace, **_payload(message))
        status = getattr(response, "status_code", 200)
        if status != 200:
            raise DeliveryError(str(getattr(response, "body", "") or status).strip())

    def working(self, message: SlackMessage) -> None:
        """Nothing to do: the command's acknowledgement already says 'working on it'."""

    def deliver(self, messages: list[SlackMessage]) -> None:
        """Send the answer; a re-delivery replaces the first message again."""
        for i, message in enumerate(messages):
            self._send(message, replace=self.replace_original if i == 0 else False)
        self.sent = len(messages)
