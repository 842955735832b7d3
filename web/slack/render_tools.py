"""Block Kit for the `/gpu estimate` and `/gpu faq` sub-commands, which call one tool directly (no agent turn)."""

from __future__ import annotations

from agent.faq_answer import FaqAnswer
from agent.writing import number
from tools.memory import Estimate
from web.slack.blockkit import MAX_CONTEXT_TEXT, SlackMessage
from web.slack.i18n import label, text
from web.slack.mrkdwn import escape, to_mrkdwn
from web.slack.render import as_messages, citation_context, context, fallback_text, header, memory_bars, section


def render_estimate(result: Estimate, language: str) -> list[SlackMessage]:
    """A memory estimate: header with the per-GPU total, the breakdown bars, the cheapest fix, assumptions."""
    title = text(
        "header_estimate",
        language,
        model=result.model_name,
        method=label("methods", result.method, language),
        per_gpu=number(result.per_gpu_gib, language, 1),
    )
    blocks = [header(title), memory_bars(result.model_dump(), language)]
    fit = result.fit
    if fit is not None and not fit.fits and fit.fixes:
        fix = fit.fixes[0]
        blocks.append(
            section(text("fix_line", language, fix=escape(fix.description), reach=number(fix.per_gpu_gib, language, 1)))
        )
    if result.assumptions:
        blocks.append(context(escape(" · ".join(result.assumptions))[:MAX_CONTEXT_TEXT]))
    return as_messages(blocks, fallback_text(title, "", language), language)


def render_faq(answer: FaqAnswer) -> list[SlackMessage]:
    """A knowledge-base answer: header, the answer text, its citations."""
    language = answer.language
    title = text("header_faq", language)
    blocks = [header(title), section(to_mrkdwn(answer.answer))]
    cited = citation_context([c.model_dump() for c in answer.citations], language)
    if cited:
        blocks.append(cited)
    return as_messages(blocks, fallback_text(title, answer.answer, language), language)
