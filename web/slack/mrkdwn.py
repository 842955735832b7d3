"""Text for Slack: escape user-derived text for mrkdwn, turn the advisor's markdown-ish answer into mrkdwn, and read
the user's text out of a Slack message (mention stripped, entities decoded, length capped)."""

from __future__ import annotations

import re

MAX_USER_CHARS = 4000
"""A user message is cut to this many characters before the advisor reads it (the reply says so)."""

_BOLD = re.compile(r"\*\*(.+?)\*\*", re.DOTALL)
_BULLET = re.compile(r"^(\s*)[-*] ", re.MULTILINE)
_BROADCAST = re.compile(r"@(channel|here|everyone)\b", re.IGNORECASE)
_MENTION = re.compile(r"<@[A-Z0-9]+(?:\|[^>]*)?>")
_SLACK_LINK = re.compile(r"<((?:https?|mailto):[^>|]+)(?:\|([^>]*))?>")
_SLACK_SPECIAL = re.compile(r"<[#!][^>]*>")


def escape(text: str) -> str:
    """Escape &, < and > as Slack requires, and defuse @channel/@here/@everyone so they never notify anyone."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _BROADCAST.sub(lambda m: "@\u200b" + m.group(1), escaped)


def to_mrkdwn(answer: str) -> str:
    """The advisor's answer (paragraphs, '- ' bullets, **bold**, [1] markers) as escaped Slack mrkdwn."""
    text = escape(answer.replace("\r\n", "\n"))
    text = _BOLD.sub(lambda m: f"*{m.group(1).strip()}*", text)
    return _BULLET.sub(lambda m: f"{m.group(1)}• ", text)


def plain(text: str) -> str:
    """Markdown-ish text as plain text (for headers and notification fallbacks): bold marks and backticks removed."""
    return _BOLD.sub(lambda m: m.group(1), text).replace("`", "")


def user_text(raw: str | None, *, limit: int = MAX_USER_CHARS) -> tuple[str, bool]:
    """The words a user typed: bot mentions removed, links and entities decoded; (text, whether it was cut)."""
    text = _MENTION.sub(" ", raw or "")
    text = _SLACK_LINK.sub(lambda m: m.group(2) or m.group(1), text)
    text = _SLACK_SPECIAL.sub(" ", text)
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    text = (
        " ".join(text.split())
        if "\n" not in text
        else "\n".join(" ".join(line.split()) for line in text.splitlines()).strip()
    )
    if len(text) > limit:
        return text[:limit].rstrip(), True
    return text, False
