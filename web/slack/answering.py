"""What the bot does for each kind of Slack input, independent of Bolt: read the user's text, show 'working on it',
run the advisor (or one tool for `/gpu estimate` and `/gpu faq`), render, deliver, remember the thread; and when
anything fails, an apology with an error id instead of silence."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from agent.faq_answer import answer_question
from agent.language import detect_language, normalise_language
from agent.parsing import parse_message
from contract.errors import UserError
from contract.languages import Language
from tools.memory import estimate_for_spec
from web.slack.blockkit import SlackMessage
from web.slack.i18n import label, text
from web.slack.mrkdwn import MAX_USER_CHARS, escape, user_text
from web.slack.posting import DeliveryError, Poster, ResponseUrlPoster, ThreadPoster
from web.slack.render import render_notice, render_result, render_task
from web.slack.render_tools import render_estimate, render_faq
from web.slack.store import SlackStore

log = logging.getLogger("gpu_advisor.slack")

Render = Callable[[bool], list[SlackMessage]]
"""tables on/off -> messages; called again with False when Slack rejects the table block."""


@dataclass(frozen=True, kw_only=True)
class Turn:
    """One user message to answer in a Slack thread."""

    workspace: str
    """The Slack workspace (team id, or the enterprise id of an org-wide install)."""
    channel: str
    thread_ts: str
    """ts of the thread's first message (the message itself when it starts a thread)."""
    text: str
    """The user's words, mention removed, cut to MAX_USER_CHARS."""
    truncated: bool
    user: str | None


class ButtonValue(BaseModel):
    """What a re-run button carries: the agent thread, the language, and the job's method (kept as is)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    thread: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9._:-]+$")
    lang: Language
    method: str | None = Field(default=None, max_length=40)


def new_error_id() -> str:
    """A short id that links an apology in Slack to the log line with the traceback."""
    return uuid.uuid4().hex[:12]


@cache
def command_words() -> dict[str, frozenset[str]]:
    """Sub-command -> the words (it/id/en) that select it, from i18n/commands.json."""
    data = json.loads(resources.files("web.slack.i18n").joinpath("commands.json").read_text(encoding="utf-8"))
    return {name: frozenset(word.lower() for word in words) for name, words in data.items()}


def split_command(raw: str) -> tuple[str, str]:
    """`/gpu` text -> (sub-command 'estimate'|'faq'|'help'|'ask', rest of the text)."""
    stripped = raw.strip()
    first, _, rest = stripped.partition(" ")
    for name, words in command_words().items():
        if first.lower().rstrip(":") in words:
            return name, rest.strip()
    return ("help", "") if not stripped else ("ask", stripped)


def workspace_of(context: Any) -> str:
    """The workspace a Bolt request comes from: its team id, else its enterprise id ('' when Slack sent neither)."""
    return str(context.get("team_id") or context.get("enterprise_id") or "")


def message_turn(event: dict[str, Any], workspace: str) -> Turn:
    """The turn a message or app_mention event asks for; its thread is the message's thread (or itself)."""
    words, cut = user_text(event.get("text"))
    return Turn(
        workspace=workspace,
        channel=event["channel"],
        thread_ts=event.get("thread_ts") or event["ts"],
        text=words,
        truncated=cut,
        user=event.get("user"),
    )


class SlackAnswerer:
    """Answers Slack turns with the advisor and keeps the thread map; one instance serves every listener."""

    def __init__(self, advisor: Any, store: SlackStore, *, tables: bool = True) -> None:
        """Answer with `advisor` (an agent.service.Advisor, or a no-argument function returning it when the server
        creates it later), remember threads in `store`, use table blocks or not."""
        self._advisor, self.store, self.tables = advisor, store, tables

    @property
    def advisor(self) -> Any:
        """The advisor (resolved now when it was given as a function)."""
        source = self._advisor
        advisor = source if hasattr(source, "respond") else source()
        if advisor is None:
            raise RuntimeError("the advisor is not loaded yet")
        return advisor

    # --- language -------------------------------------------------------------------------------------------

    def user_language(self, client: WebClient, user: str | None) -> str:
        """The language of the user's Slack locale (users.info), English when unknown or unsupported."""
        if not user:
            return "en"
        try:
            locale = client.users_info(user=user, include_locale=True)["user"].get("locale") or "en"
            return normalise_language(locale)
        except (SlackApiError, ValueError, KeyError, TypeError):
            return "en"

    def turn_language(self, words: str, previous: str | None, client: WebClient, user: str | None) -> str:
        """The language to talk in before the advisor has answered: the text's, else the thread's, else the user's."""
        if not words.strip():
            return previous or self.user_language(client, user)
        return detect_language(words, previous=previous).language

    # --- running ----------------------------------------------------------------------------------------------

    def deliver(self, poster: Poster, render: Render) -> None:
        """Deliver rendered messages; when Slack rejects the blocks with tables, deliver them without."""
        try:
            poster.deliver(render(self.tables))
        except DeliveryError as error:
            if not (self.tables and error.blocks_rejected):
                raise
            log.info("Slack rejected the table block; answering with fields instead")
            poster.deliver(render(False))

    def run(self, poster: Poster, language: str, render: Callable[[], Render]) -> bool:
        """Produce and deliver an answer; on bad input say why, on failure apologise with an error id."""
        try:
            self.deliver(poster, render())
            return True
        except (ValueError, UserError) as error:
            reason = escape(" ".join(str(error).split()))
            self.apologise(poster, lambda: render_notice(text("bad_input", language, reason=reason), language))
        except Exception:
            error_id = new_error_id()
            log.exception("Slack answer failed (error id %s)", error_id)
            self.apologise(poster, lambda: render_notice(text("apology", language, error_id=error_id), language))
        return False

    def apologise(self, poster: Poster, message: Callable[[], list[SlackMessage]]) -> None:
        """Deliver an error notice; if even that fails, log it (there is nothing else left to do)."""
        try:
            poster.deliver(message())
        except Exception:
            log.exception("could not deliver the error notice to Slack (error id %s)", new_error_id())

    # --- messages: mentions, DMs, thread follow-ups ----------------------------------------------------------

    def should_answer(self, event: dict[str, Any], bot_user_id: str | None, workspace: str) -> bool:
        """A plain message is answered in a DM, or in a channel thread this bot already answers in (unless it
        mentions the bot: the app_mention event covers that)."""
        if event.get("subtype") or event.get("bot_id"):
            return False
        if event.get("channel_type") == "im":
            return True
        if bot_user_id and f"<@{bot_user_id}" in (event.get("text") or ""):
            return False
        thread_ts = event.get("thread_ts")
        return bool(thread_ts) and self.store.link(workspace, event["channel"], thread_ts) is not None

    def answer_message(self, event: dict[str, Any], client: WebClient, workspace: str) -> None:
        """Answer a mention, a DM or a follow-up in its Slack thread, continuing that thread's agent thread."""
        turn = message_turn(event, workspace)
        if not self.store.claim(f"message:{turn.workspace}:{turn.channel}:{event['ts']}"):
            return  # the same message arrived as app_mention and as message, or again
        link = self.store.link(turn.workspace, turn.channel, turn.thread_ts)
        previous = link.language if link else None
        language = self.turn_language(turn.text, previous, client, turn.user)
        poster = ThreadPoster(client, turn.channel, turn.thread_ts)
        if not turn.text:
            self.run(poster, language, lambda: lambda tables: render_notice(text("help", language), language))
            return
        notes = (text("truncated", language, limit=MAX_USER_CHARS),) if turn.truncated else ()

        def render() -> Render:
            """Ask the advisor, remember the thread, and return the renderer."""
            result = self.advisor.respond(turn.text, thread_id=link.agent_thread_id if link else None)
            self.store.save_link(turn.workspace, turn.channel, turn.thread_ts, result["thread_id"], result["language"])
            lang = result["language"]
            shown = (text("truncated", lang, limit=MAX_USER_CHARS),) if turn.truncated else ()
            return lambda tables: render_result(result, tables=tables, notes=shown)

        try:
            poster.working(render_notice(text("working", language), language, notes=notes)[0])
        except DeliveryError:
            log.exception("could not post the 'working on it' message (error id %s)", new_error_id())
        self.run(poster, language, render)

    # --- the /gpu command -------------------------------------------------------------------------------------

    def command_language(self, command: dict[str, Any]) -> str:
        """The language of a `/gpu` command's text (English when it says too little)."""
        _, rest = split_command(command.get("text") or "")
        return detect_language(rest or "").language

    def answer_command(self, command: dict[str, Any], respond: Any, client: WebClient) -> None:
        """`/gpu estimate …`, `/gpu faq …`, `/gpu help` or `/gpu <job>`; the answer replaces the acknowledgement."""
        words, cut = user_text(command.get("text"))
        name, rest = split_command(words)
        language = detect_language(rest).language if rest else self.user_language(client, command.get("user_id"))
        poster = ResponseUrlPoster(respond, replace_original=True)
        notes = (text("truncated", language, limit=MAX_USER_CHARS),) if cut else ()
        if name == "help" or not rest:
            key = {"estimate": "estimate_needs_model", "faq": "faq_needs_question"}.get(name, "help")
            self.run(poster, language, lambda: lambda tables: render_notice(text(key, language), language))
            return
        renderers = {"estimate": self._estimate, "faq": self._faq, "ask": self._ask}
        self.run(poster, language, lambda: renderers[name](rest, language, notes))

    def _estimate(self, words: str, language: str, notes: tuple[str, ...]) -> Render:
        """Memory estimate for the job the words describe (model and method), on the GPU they name if any."""
        spec = parse_message(words, lang=language).spec
        if not spec.model and not spec.params_b:
            return lambda tables: render_notice(text("estimate_needs_model", language), language, notes=notes)
        result = estimate_for_spec(spec, gpu=spec.gpu)
        return lambda tables: render_estimate(result, language)

    def _faq(self, words: str, language: str, notes: tuple[str, ...]) -> Render:
        """The knowledge base's answer to a question."""
        answer = answer_question(words)
        return lambda tables: render_faq(answer)

    def _ask(self, words: str, language: str, notes: tuple[str, ...]) -> Render:
        """A full advisor turn in a new agent thread (buttons continue it)."""
        result = self.advisor.respond(words)
        shown = (text("truncated", result["language"], limit=MAX_USER_CHARS),) if notes else ()
        return lambda tables: render_result(result, tables=tables, notes=shown)

    # --- the re-run buttons -----------------------------------------------------------------------------------

    def _task_render(self, thread: str, language: str) -> Render:
        """The thread's current recommendation as a SkyPilot task (or why it cannot be one)."""
        from agent.export import ExportError, build_task

        result = self.advisor.rerun_current_job(thread)
        try:
            if result is None:
                raise ExportError(text("skypilot_no_job", language))
            task = build_task(result, db_path=self.advisor.db_path)
        except ExportError as error:
            notice = text("skypilot_error", language, reason=escape(str(error)))
            return lambda tables: render_notice(notice, language)
        return lambda tables: render_task(task.yaml, task.launch_command, language, task.note)

    def answer_button(
        self, body: dict[str, Any], action: dict[str, Any], client: WebClient, respond: Any, workspace: str
    ) -> None:
        """Re-run the thread's job cheaper, faster or without spot; answer below the message with the buttons."""
        name = str(action.get("action_id", "")).removeprefix("gpu_")
        try:
            value = ButtonValue.model_validate_json(action.get("value") or "")
        except ValidationError:
            log.warning("ignored a button with an unreadable value (action %s)", name)
            return
        language = value.lang
        container = body.get("container") or {}
        message = body.get("message") or {}
        channel = (body.get("channel") or {}).get("id") or container.get("channel_id")
        if container.get("is_ephemeral") or not channel or not message.get("ts"):
            poster: Poster = ResponseUrlPoster(respond, replace_original=False)
            thread_ts = None
        else:
            thread_ts = message.get("thread_ts") or message["ts"]
            poster = ThreadPoster(client, channel, thread_ts)
            try:
                poster.working(render_notice(text("working", language), language)[0])
            except DeliveryError:
                log.exception("could not post the 'working on it' message (error id %s)", new_error_id())
        if name == "skypilot":
            self.run(poster, language, lambda: self._task_render(value.thread, language))
            return
        rerun = {
            "cheaper": {"prefer": "cost"},
            "faster": {"prefer": "speed"},
            "no_spot": {"changes": {"interruptible_ok": False}},
        }.get(name)
        if rerun is None:
            return

        def render() -> Render:
            """Re-run the agent turn with the button's change."""
            kwargs: dict[str, Any] = dict(rerun)
            if "changes" not in kwargs:
                kwargs["changes"] = {"method": value.method} if value.method else None
            request = "" if kwargs.get("changes") else label("button_requests", name, language)
            result = self.advisor.respond(request, thread_id=value.thread, language=language, **kwargs)
            if thread_ts is not None:
                self.store.save_link(workspace, channel, thread_ts, result["thread_id"], result["language"])
            return lambda tables: render_result(result, tables=tables)

        self.run(poster, language, render)
