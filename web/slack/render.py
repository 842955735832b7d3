"""The advisor's result as Block Kit: a verdict header, the answer, the top offers (table block or fields), the memory
breakdown as text bars, the spot verdict, citations as context and the re-run buttons; split into valid messages."""

from __future__ import annotations

import json
from typing import Any

from agent.writing import hours, money, number, templates
from tools.models import lookup
from web.slack.blockkit import MAX_HEADER_TEXT, Block, SlackMessage, split_blocks, validate
from web.slack.i18n import label, strings, text
from web.slack.mrkdwn import escape, plain, to_mrkdwn

TOP_OFFERS = 5
BAR_WIDTH = 20
FALLBACK_CHARS = 300
ACTIONS: tuple[str, ...] = ("cheaper", "faster", "no_spot", "skypilot")
"""Buttons under a recommendation (re-run cheaper/faster/without spot, or the SkyPilot task); action_id 'gpu_<name>'."""
JOB_INTENTS = ("job_request", "follow_up")


def section(mrkdwn: str) -> Block:
    """A mrkdwn section block."""
    return {"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn}}


def context(*elements: str) -> Block:
    """A context block of mrkdwn elements."""
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": element} for element in elements]}


def header(title: str) -> Block:
    """A header block (plain text, cut to Slack's limit)."""
    title = plain(title)
    if len(title) > MAX_HEADER_TEXT:
        title = title[: MAX_HEADER_TEXT - 1].rstrip() + "…"
    return {"type": "header", "text": {"type": "plain_text", "text": title, "emoji": True}}


def model_name(spec: dict[str, Any], estimate: dict[str, Any] | None, language: str) -> str:
    """A readable model name: the estimate's, the registry's, the size, or a placeholder."""
    if estimate and estimate.get("model_name"):
        return str(estimate["model_name"])
    if spec.get("model"):
        arch = lookup(spec["model"])
        return arch.name if arch else str(spec["model"])
    if spec.get("params_b"):
        return f"{number(spec['params_b'], language, 0 if float(spec['params_b']).is_integer() else 1)}B"
    return text("model_unknown", language)


def verdict(result: dict[str, Any], language: str) -> tuple[str, str]:
    """(emoji, localized verdict) for the header, from the topology of the recommended offer."""
    offers = result.get("offers") or []
    topology = result.get("topology") or {}
    if not offers:
        return ":x:", label("verdicts", "no_offer", language)
    top = offers[0]
    code = topology.get("verdict") or top.get("topology_verdict") or "no_offer"
    params = {
        "gpu": top.get("gpu", "?"),
        "gpu_count": top.get("total_gpus") or top.get("gpu_count", 1),
        "nodes": top.get("nodes") or topology.get("nodes") or 1,
    }
    ok = top.get("fits", True) and top.get("meets_budget") is not False and top.get("meets_deadline") is not False
    return (":white_check_mark:" if ok else ":warning:"), label("verdicts", code, language).format(**params)


def job_header(result: dict[str, Any], language: str) -> str:
    """The header line for a job answer."""
    spec = result.get("spec") or {}
    icon, words = verdict(result, language)
    method = label("methods", spec["method"], language) if spec.get("method") else text("method_unknown", language)
    return text(
        "header_job",
        language,
        icon=icon,
        model=model_name(spec, result.get("estimate"), language),
        method=method,
        verdict=words,
    )


def _region(offer: dict[str, Any]) -> str:
    """The offer's region, or a dash."""
    return offer.get("region") or "—"


def offer_cells(offer: dict[str, Any], rank: int, language: str) -> list[str]:
    """One offer as table cells, in the order of the 'columns' strings."""
    gpus = offer.get("total_gpus") or offer.get("gpu_count", 1)
    return [
        str(rank),
        offer["provider"],
        offer["instance_type"],
        f"{gpus}× {offer['gpu']}",
        _region(offer),
        text("pricing_spot" if offer.get("spot") else "pricing_on_demand", language),
        money(offer["price_per_hour"], "USD", language),
        hours(offer["est_hours"], language),
        money(offer["est_cost"], "USD", language),
    ]


def offers_table(offers: list[dict[str, Any]], language: str) -> Block:
    """The top offers as a native table block (header row plus one row per offer)."""
    columns = strings(language)["columns"]
    rows = [[{"type": "raw_text", "text": name} for name in columns]]
    rows += [
        [{"type": "raw_text", "text": cell} for cell in offer_cells(offer, i, language)]
        for i, offer in enumerate(offers, 1)
    ]
    right, left = {"align": "right"}, {"align": "left"}
    return {
        "type": "table",
        "rows": rows,
        "column_settings": [right, left, left, left, left, left, right, right, right],
    }


def offers_fields(offers: list[dict[str, Any]], language: str) -> list[Block]:
    """The top offers as one section each, with price, hours and total as fields (for clients without tables)."""
    blocks = []
    for i, offer in enumerate(offers, 1):
        cells = offer_cells(offer, i, language)
        line = text(
            "offer_line",
            language,
            rank=i,
            provider=escape(cells[1]),
            instance=escape(cells[2]),
            gpus=offer.get("total_gpus") or offer.get("gpu_count", 1),
            gpu=escape(offer["gpu"]),
            region=escape(cells[4]),
            pricing=cells[5],
        )
        fields = [
            text("field_price", language, price=cells[6]),
            text("field_hours", language, hours=cells[7]),
            text("field_cost", language, cost=cells[8]),
        ]
        blocks.append({**section(line), "fields": [{"type": "mrkdwn", "text": f} for f in fields]})
    return blocks


def _bar(value: float, scale: float) -> str:
    """A fixed-width bar of block characters for value/scale."""
    filled = 0 if scale <= 0 else max(0, min(BAR_WIDTH, round(value / scale * BAR_WIDTH)))
    return "█" * filled + "░" * (BAR_WIDTH - filled)


def memory_bars(estimate: dict[str, Any], language: str) -> Block:
    """The per-GPU memory breakdown as text bars in a code block, scaled to the card (or the total)."""
    breakdown = estimate.get("breakdown_gib") or {}
    fit = estimate.get("fit") or {}
    vram = fit.get("vram_gib")
    per_gpu = float(estimate["per_gpu_gib"])
    scale = max(float(vram or 0), per_gpu)
    names = {key: label("terms", key, language) for key in breakdown}
    width = max((len(name) for name in names.values()), default=0)
    lines = [
        f"{names[key].ljust(width)}  {_bar(float(value), scale)} {number(float(value), language, 1):>6}"
        for key, value in breakdown.items()
    ]
    of_vram = text("memory_of_vram", language, vram=number(float(vram), language, 0)) if vram else ""
    title = text("memory_title", language, per_gpu=number(per_gpu, language, 1), of_vram=of_vram)
    if vram:
        title += " · " + text("memory_fits" if fit.get("fits") else "memory_does_not_fit", language)
    return section(title + "\n```\n" + "\n".join(lines) + "\n```")


def spot_line(result: dict[str, Any], language: str) -> str | None:
    """The spot verdict of the recommended offer, in one line (with the reason when it is on-demand)."""
    offers = result.get("offers") or []
    if not offers:
        return None
    lines = strings(language)["spot"]
    if (result.get("spec") or {}).get("interruptible_ok") is False:
        return lines["not_allowed"]
    top = offers[0]
    key = top.get("spot_verdict")
    if key not in ("spot", "on_demand", "no_spot_offer"):
        return None
    if key == "on_demand":
        codes = " ".join(reason.get("code", "") for reason in top.get("reasons") or [])
        if "deadline_risk" in codes or "never_finishes" in codes:
            key = "on_demand_deadline_risk"
        elif "not_cheaper" in codes:
            key = "on_demand_not_cheaper"
    return lines[key].format(savings=money(float(top.get("spot_savings_usd") or 0.0), "USD", language))


def citation_context(citations: list[dict[str, Any]], language: str) -> Block | None:
    """The cited guide entries as one context block: '[n] title — article'."""
    if not citations:
        return None
    elements = [f"*{escape(text('sources', language))}*"]
    for i, citation in enumerate(citations[:9], 1):
        article = label("article", citation.get("article", ""), language)
        elements.append(f"[{i}] {escape(citation.get('title', ''))} — _{escape(article)}_")
    return context(*elements)


def buttons(result: dict[str, Any], language: str) -> Block:
    """The re-run buttons; each carries the agent thread id, the language and the job's method."""
    spec = result.get("spec") or {}
    value = json.dumps(
        {"thread": result["thread_id"], "lang": language, "method": spec.get("method")}, separators=(",", ":")
    )
    names = [name for name in ACTIONS if not (name == "no_spot" and spec.get("interruptible_ok") is False)]
    return {
        "type": "actions",
        "block_id": "gpu_rerun",
        "elements": [
            {
                "type": "button",
                "action_id": f"gpu_{name}",
                "value": value,
                "text": {"type": "plain_text", "text": label("buttons", name, language)},
            }
            for name in names
        ],
    }


def result_blocks(result: dict[str, Any], *, tables: bool = True, notes: tuple[str, ...] = ()) -> list[Block]:
    """All blocks for one advisor result, before splitting into messages."""
    language = result.get("language") or "en"
    intent = result.get("intent")
    offers = (result.get("offers") or [])[:TOP_OFFERS]
    blocks: list[Block] = []
    if intent in JOB_INTENTS and result.get("spec"):
        blocks.append(header(job_header(result, language)))
    elif intent == "faq":
        blocks.append(header(text("header_faq", language)))
    elif intent == "ask_back":
        blocks.append(header(text("header_ask_back", language)))
    if notes:
        blocks.append(context(*notes))
    body = answer_body(result.get("answer") or "", language)
    if body:
        blocks.append(section(to_mrkdwn(body)))
    if offers:
        blocks += [{"type": "divider"}, section(text("offers_title", language))]
        blocks += [offers_table(offers, language)] if tables else offers_fields(offers, language)
    if result.get("estimate") and intent in JOB_INTENTS:
        blocks.append(memory_bars(result["estimate"], language))
    spot = spot_line(result, language) if intent in JOB_INTENTS else None
    if spot:
        blocks.append(section(spot))
    cited = citation_context(result.get("citations") or [], language)
    if cited:
        blocks.append(cited)
    if offers and intent in JOB_INTENTS and result.get("thread_id"):
        blocks.append(buttons(result, language))
    return blocks


def answer_body(answer: str, language: str) -> str:
    """The answer without its trailing 'Sources:' list (citations get their own context block)."""
    title = templates(language).get("sources_title", "")
    paragraphs = answer.strip().split("\n\n")
    if title and paragraphs and paragraphs[-1].startswith(title) and len(paragraphs) > 1:
        paragraphs = paragraphs[:-1]
    return "\n\n".join(paragraphs).strip()


def fallback_text(title: str, body: str, language: str) -> str:
    """Notification text: the title and the first line of the body, plain and short."""
    first = next((line.strip() for line in plain(body).splitlines() if line.strip()), "")
    title = plain(title).strip()
    line = text("fallback_job", language, header=title, first_line=first) if title and first else (title or first)
    line = line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return (line[: FALLBACK_CHARS - 1] + "…") if len(line) > FALLBACK_CHARS else (line or "…")


def as_messages(blocks: list[Block], fallback: str, language: str) -> list[SlackMessage]:
    """Split blocks into valid messages, each with the fallback text (numbered when there are several)."""
    groups = split_blocks(blocks)
    if len(groups) == 1:
        return [validate(SlackMessage(text=fallback, blocks=groups[0]))]
    count = len(groups)
    return [
        validate(SlackMessage(text=f"{fallback} {text('part', language, index=i, count=count)}", blocks=group))
        for i, group in enumerate(groups, 1)
    ]


def render_result(result: dict[str, Any], *, tables: bool = True, notes: tuple[str, ...] = ()) -> list[SlackMessage]:
    """The advisor's result as one or more valid Slack messages."""
    language = result.get("language") or "en"
    blocks = result_blocks(result, tables=tables, notes=notes)
    title = next((b["text"]["text"] for b in blocks if b["type"] == "header"), "")
    return as_messages(blocks, fallback_text(title, result.get("answer") or "", language), language)


def render_task(yaml_text: str, launch_command: str, language: str, note: str | None = None) -> list[SlackMessage]:
    """A SkyPilot task as code blocks (split to Slack's section limit) under a one-line introduction (after `note`:
    which launchable offer replaces one SkyPilot cannot launch)."""
    chunks, current = [], ""
    for line in yaml_text.splitlines(keepends=True):
        if len(current) + len(line) > 2800:
            chunks.append(current)
            current = ""
        current += line
    chunks.append(current)
    intro = text("skypilot_intro", language, launch=escape(launch_command))
    blocks = (
        ([section(escape(note))] if note else [])
        + [section(intro)]
        + [section("```" + escape(chunk) + "```") for chunk in chunks if chunk]
    )
    return as_messages(blocks, fallback_text("", intro, language), language)


def render_notice(message: str, language: str, *, notes: tuple[str, ...] = ()) -> list[SlackMessage]:
    """A plain mrkdwn notice (help, apology, 'working on it') as valid messages."""
    blocks = ([context(*notes)] if notes else []) + [section(message)]
    return as_messages(blocks, fallback_text("", message, language), language)
