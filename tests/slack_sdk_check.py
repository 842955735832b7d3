"""Block Kit checks by slack_sdk's own models, independent of the product's validator (web.slack.blockkit)."""

from __future__ import annotations

from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.basic_objects import JsonObject
from slack_sdk.models.blocks import Block

MAX_MESSAGE_BLOCKS = 50
"""Slack: a message carries at most 50 blocks (api.slack.com/reference/block-kit/blocks)."""


def sdk_problems(blocks: list[dict]) -> list[str]:
    """What slack_sdk rejects in one message's blocks: unknown types, failed validation, too many blocks/tables."""
    found: list[str] = []
    if len(blocks) > MAX_MESSAGE_BLOCKS:
        found.append(f"{len(blocks)} blocks")
    if sum(b.get("type") == "table" for b in blocks) > 1:
        found.append("more than one table")  # Slack allows one table block per message
    for index, raw in enumerate(blocks):
        try:
            parsed = Block.parse(raw)
        except TypeError as error:  # a required field missing
            found.append(f"blocks[{index}]: {error}")
            continue
        if parsed is None or type(parsed) is Block:
            found.append(f"blocks[{index}]: slack_sdk does not know type {raw.get('type')!r}")
            continue
        invalid = _invalid(parsed)
        found.extend(f"blocks[{index}]: {problem}" for problem in invalid)
        if not invalid and parsed.to_dict() != raw:
            found.append(f"blocks[{index}]: fields slack_sdk drops or rewrites: {raw} -> {parsed.to_dict()}")
    return found


def _invalid(value: object) -> list[str]:
    """validate_json on an object and on every object nested in it (slack_sdk checks one level only)."""
    if isinstance(value, list):
        return [problem for item in value for problem in _invalid(item)]
    if not isinstance(value, JsonObject):
        return []
    try:
        value.validate_json()
    except SlackObjectFormationError as error:
        return [str(error)]
    return [problem for name in sorted(value.attributes) for problem in _invalid(getattr(value, name, None))]
