"""Block Kit limits for the block kinds this bot posts: a validator that lists every violation, and splitters that
turn a long answer into several valid sections and messages instead of letting Slack reject it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3000
MAX_FIELDS = 10
MAX_FIELD_TEXT = 2000
MAX_HEADER_TEXT = 150
MAX_CONTEXT_ELEMENTS = 10
MAX_CONTEXT_TEXT = 3000
MAX_ACTION_ELEMENTS = 25
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_ID = 255
MAX_TABLE_ROWS = 100
MAX_TABLE_CELLS = 20
MAX_TABLES = 1
MAX_FALLBACK_TEXT = 4000
"""Slack truncates message `text` beyond 40,000 characters; notifications show far less, so we keep it short."""

Block = dict[str, Any]


class SlackMessage(BaseModel):
    """One message as posted: the notification/accessibility fallback text and its blocks."""

    model_config = ConfigDict(frozen=True)

    text: str = Field(min_length=1, max_length=MAX_FALLBACK_TEXT, description="Fallback for notifications.")
    blocks: list[Block] = Field(default_factory=list)


class BlockKitError(ValueError):
    """A message Slack would reject, with every violation listed."""


def _text_of(obj: Any) -> str:
    """The text of a text object, or '' when it is not one."""
    return obj.get("text", "") if isinstance(obj, dict) else ""


def _check_text_object(obj: Any, where: str, limit: int, out: list[str], kinds: tuple[str, ...]) -> None:
    """Append problems of one text object (type and length)."""
    if not isinstance(obj, dict) or obj.get("type") not in kinds:
        out.append(f"{where}: must be a text object of type {' or '.join(kinds)}")
        return
    text = _text_of(obj)
    if not isinstance(text, str) or not text:
        out.append(f"{where}: text must be a non-empty string")
    elif len(text) > limit:
        out.append(f"{where}: text has {len(text)} characters, the limit is {limit}")


def _section(block: Block, where: str, out: list[str]) -> None:
    """Problems of a section block."""
    if "text" not in block and "fields" not in block:
        out.append(f"{where}: a section needs text or fields")
    if "text" in block:
        _check_text_object(block["text"], f"{where}.text", MAX_SECTION_TEXT, out, ("mrkdwn", "plain_text"))
    fields = block.get("fields", [])
    if len(fields) > MAX_FIELDS:
        out.append(f"{where}: {len(fields)} fields, the limit is {MAX_FIELDS}")
    for i, field in enumerate(fields):
        _check_text_object(field, f"{where}.fields[{i}]", MAX_FIELD_TEXT, out, ("mrkdwn", "plain_text"))


def _context(block: Block, where: str, out: list[str]) -> None:
    """Problems of a context block."""
    elements = block.get("elements", [])
    if not elements or len(elements) > MAX_CONTEXT_ELEMENTS:
        out.append(f"{where}: a context needs 1 to {MAX_CONTEXT_ELEMENTS} elements, it has {len(elements)}")
    for i, element in enumerate(elements):
        _check_text_object(element, f"{where}.elements[{i}]", MAX_CONTEXT_TEXT, out, ("mrkdwn", "plain_text"))


def _actions(block: Block, where: str, out: list[str]) -> None:
    """Problems of an actions block of buttons."""
    elements = block.get("elements", [])
    if not elements or len(elements) > MAX_ACTION_ELEMENTS:
        out.append(f"{where}: an actions block needs 1 to {MAX_ACTION_ELEMENTS} elements, it has {len(elements)}")
    seen: set[str] = set()
    for i, element in enumerate(elements):
        here = f"{where}.elements[{i}]"
        if element.get("type") != "button":
            out.append(f"{here}: only buttons are used")
            continue
        _check_text_object(element.get("text"), f"{here}.text", MAX_BUTTON_TEXT, out, ("plain_text",))
        action_id = element.get("action_id", "")
        if not action_id or len(action_id) > MAX_ID or action_id in seen:
            out.append(f"{here}: action_id must be unique in the block and 1..{MAX_ID} characters")
        seen.add(action_id)
        if len(element.get("value", "")) > MAX_BUTTON_VALUE:
            out.append(f"{here}: value longer than {MAX_BUTTON_VALUE} characters")
        if element.get("style") not in (None, "primary", "danger"):
            out.append(f"{here}: style must be primary or danger")


def _table(block: Block, where: str, out: list[str]) -> None:
    """Problems of a table block."""
    rows = block.get("rows", [])
    if not rows or len(rows) > MAX_TABLE_ROWS:
        out.append(f"{where}: a table needs 1 to {MAX_TABLE_ROWS} rows, it has {len(rows)}")
    for r, row in enumerate(rows):
        if not row or len(row) > MAX_TABLE_CELLS:
            out.append(f"{where}.rows[{r}]: 1 to {MAX_TABLE_CELLS} cells, it has {len(row)}")
        for c, cell in enumerate(row):
            if not isinstance(cell, dict) or cell.get("type") not in ("raw_text", "rich_text"):
                out.append(f"{where}.rows[{r}][{c}]: a cell must be raw_text or rich_text")
            elif cell["type"] == "raw_text" and not cell.get("text"):
                out.append(f"{where}.rows[{r}][{c}]: a raw_text cell needs text")
    settings = block.get("column_settings", [])
    if len(settings) > MAX_TABLE_CELLS:
        out.append(f"{where}: more than {MAX_TABLE_CELLS} column settings")
    for i, setting in enumerate(settings):
        if not isinstance(setting, dict) or setting.get("align", "left") not in ("left", "center", "right"):
            out.append(f"{where}.column_settings[{i}]: must be an object with align left, center or right")


_CHECKS = {"section": _section, "context": _context, "actions": _actions, "table": _table}


def problems(message: SlackMessage) -> list[str]:
    """Every reason Slack would reject this message (empty when it is valid)."""
    out: list[str] = []
    blocks = message.blocks
    if len(blocks) > MAX_BLOCKS:
        out.append(f"{len(blocks)} blocks, the limit is {MAX_BLOCKS}")
    tables = sum(1 for block in blocks if block.get("type") == "table")
    if tables > MAX_TABLES:
        out.append(f"{tables} tables, a message may hold {MAX_TABLES}")
    block_ids: set[str] = set()
    for i, block in enumerate(blocks):
        where, kind = f"blocks[{i}]", block.get("type")
        block_id = block.get("block_id")
        if block_id is not None:
            if not block_id or len(block_id) > MAX_ID or block_id in block_ids:
                out.append(f"{where}: block_id must be unique and 1..{MAX_ID} characters")
            block_ids.add(block_id)
        if kind == "header":
            _check_text_object(block.get("text"), f"{where}.text", MAX_HEADER_TEXT, out, ("plain_text",))
        elif kind == "divider":
            continue
        elif kind in _CHECKS:
            _CHECKS[kind](block, where, out)
        else:
            out.append(f"{where}: unsupported block type {kind!r}")
    return out


def validate(message: SlackMessage) -> SlackMessage:
    """Return the message if Slack would accept it; BlockKitError listing every violation otherwise."""
    found = problems(message)
    if found:
        raise BlockKitError("; ".join(found))
    return message


def _cut_point(text: str, limit: int) -> int:
    """Where to cut `text` so the first part is at most `limit` characters: paragraph, line, word, else hard."""
    window = text[:limit]
    for separator in ("\n\n", "\n", " "):
        at = window.rfind(separator)
        if at > limit // 3:
            return at
    at = limit
    entity = window.rfind("&", max(0, limit - 6))
    if entity != -1 and ";" not in window[entity:]:
        at = entity  # never split an escaped entity such as &amp;
    return max(at, 1)


def split_text(text: str, limit: int = MAX_SECTION_TEXT) -> list[str]:
    """Split text into pieces of at most `limit` characters, at paragraph, line or word boundaries when possible."""
    pieces: list[str] = []
    rest = text
    while len(rest) > limit:
        at = _cut_point(rest, limit)
        head, rest = rest[:at].rstrip(), rest[at:].lstrip("\n ")
        if head:
            pieces.append(head)
    if rest.strip() or not pieces:
        pieces.append(rest)
    return pieces


def fit_sections(blocks: list[Block]) -> list[Block]:
    """The same blocks with every over-long section text split into consecutive sections."""
    out: list[Block] = []
    for block in blocks:
        text = block.get("text") if block.get("type") == "section" else None
        if not text or len(_text_of(text)) <= MAX_SECTION_TEXT:
            out.append(block)
            continue
        pieces = split_text(_text_of(text))
        for i, piece in enumerate(pieces):
            part = {"type": "section", "text": {**text, "text": piece}}
            if i == len(pieces) - 1 and "fields" in block:
                part["fields"] = block["fields"]
            out.append(part)
    return out


def split_blocks(blocks: list[Block], limit: int = MAX_BLOCKS) -> list[list[Block]]:
    """Group blocks into messages of at most `limit` blocks and one table each, keeping their order."""
    groups: list[list[Block]] = [[]]
    for block in fit_sections(blocks):
        current = groups[-1]
        has_table = any(b.get("type") == "table" for b in current)
        if len(current) >= limit or (block.get("type") == "table" and has_table):
            groups.append([])
        groups[-1].append(block)
    return [group for group in groups if group] or [[]]
