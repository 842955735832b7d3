"""A signed Slack request captured and sent again (within Bolt's five-minute window) is answered once: the store
remembers signatures, in SQLite for one server and in PostgreSQL for many."""

from __future__ import annotations

import time
from contextlib import ExitStack
from typing import Any

import httpx2
import pytest
from fastapi import FastAPI
from pydantic import SecretStr
from slack_bolt.authorization import AuthorizeResult

from tests.pg_server import fresh_database, postgres_url  # noqa: F401 - the fixture
from tests.slack_fakes import (
    BOT_TOKEN,
    BOT_USER,
    SIGNING_SECRET,
    action_body,
    command_body,
    event_body,
    fake_slack,
    mention,
    offline_advisor,
    serve,
    signed_headers,
)
from web.slack.bolt_app import create_bolt_app
from web.slack.events_route import mount_bolt_app
from web.slack.settings import SlackSettings
from web.slack.store import SlackStore, open_store

FORM = "application/x-www-form-urlencoded"
JSON = "application/json"
JOB = "QLoRA on Llama 3 8B, budget $50"


def authorize(enterprise_id: str | None, team_id: str | None, logger: Any) -> AuthorizeResult:
    """The bot's identity without an auth.test call."""
    return AuthorizeResult(
        enterprise_id=enterprise_id, team_id=team_id, bot_token=BOT_TOKEN, bot_id="B0BOT", bot_user_id=BOT_USER
    )


def slack_server(stack: ExitStack, advisor: Any, slack: Any, store: Any) -> str:
    """A Bolt app on real uvicorn answering with `advisor` and keeping state in `store`; its base URL."""
    settings = SlackSettings(bot_token=SecretStr(BOT_TOKEN), signing_secret=SecretStr(SIGNING_SECRET))
    api = FastAPI()
    mount_bolt_app(api, create_bolt_app(settings, advisor, store=store, api_url=slack.url, authorize=authorize))
    return stack.enter_context(serve(api))


def post(base: str, body: str, headers: dict[str, str]) -> httpx2.Response:
    """POST to /slack/events with exactly these headers (a replay reuses them)."""
    return httpx2.post(f"{base}/slack/events", content=body, headers=headers, timeout=60)


def answers(slack: Any, name: str, settle_s: float = 1.5) -> int:
    """How many answers reached response_url `name`, after waiting for late ones."""
    slack.wait_for(lambda calls: any(c.path == f"/response/{name}" for c in calls), timeout=60)
    time.sleep(settle_s)
    return len(slack.to("response_url", path=f"/response/{name}"))


@pytest.fixture(scope="module")
def one_server(tmp_path_factory):
    """One Slack server on the SQLite store."""
    home = tmp_path_factory.mktemp("replay")
    with ExitStack() as stack:
        advisor = stack.enter_context(offline_advisor(home))
        slack = stack.enter_context(fake_slack())
        store = SlackStore(home / "slack.sqlite")
        stack.callback(store.close)
        yield slack_server(stack, advisor, slack, store), slack


def test_a_replayed_slash_command_is_refused_and_answered_once(one_server):
    base, slack = one_server
    body = command_body("faq spot?", response_url=slack.response_url("replayed-command"))
    headers = signed_headers(body, content_type=FORM)
    first, replay = post(base, body, headers), post(base, body, headers)
    assert (first.status_code, replay.status_code) == (200, 401)
    assert answers(slack, "replayed-command") == 1


def test_a_replayed_button_click_is_refused(one_server):
    base, slack = one_server
    body = action_body(
        "gpu_cheaper",
        '{"thread": "t-replay", "lang": "en"}',
        channel="C0REPLAY",
        message_ts="17100.0001",
        response_url=slack.response_url("replayed-click"),
        ephemeral=True,
    )
    headers = signed_headers(body, content_type=FORM)
    first, replay = post(base, body, headers), post(base, body, headers)
    assert (first.status_code, replay.status_code) == (200, 401)
    assert answers(slack, "replayed-click") == 1


def test_a_replayed_event_is_acknowledged_without_a_second_answer(one_server):
    base, slack = one_server
    body = event_body(mention(JOB, channel="C0EVREPLAY", ts="17200.0001"), "EvReplay1")
    headers = signed_headers(body, content_type=JSON)
    assert post(base, body, headers).status_code == 200
    slack.wait_for(
        lambda calls: any(c.method == "chat.update" and c.body.get("channel") == "C0EVREPLAY" for c in calls),
        timeout=60,
    )
    replay = post(base, body, headers)
    assert replay.status_code == 200 and replay.headers.get("x-slack-no-retry") == "1"
    time.sleep(1.0)
    assert len(slack.to("chat.postMessage", channel="C0EVREPLAY")) == 1


def test_signatures_are_forgotten_after_the_replay_window(tmp_path, monkeypatch):
    store = SlackStore(tmp_path / "slack.sqlite")
    assert store.first_delivery("v0=abc") and not store.first_delivery("v0=abc")
    later = time.time() + 11 * 60
    monkeypatch.setattr(time, "time", lambda: later)
    store.prune()
    assert store.first_delivery("v0=abc")  # Bolt refuses a timestamp this old anyway; the table stays small
    store.close()


def test_two_servers_on_postgres_share_replay_protection_and_thread_links(postgres_url, tmp_path):  # noqa: F811
    url = fresh_database(postgres_url)
    with ExitStack() as stack:
        advisor = stack.enter_context(offline_advisor(tmp_path))
        slack = stack.enter_context(fake_slack())
        stores = [open_store(database_url=url), open_store(database_url=url)]
        for store in stores:
            stack.callback(store.close)
        first_base, second_base = (slack_server(stack, advisor, slack, store) for store in stores)
        body = command_body("faq spot?", response_url=slack.response_url("pg-replay"))
        headers = signed_headers(body, content_type=FORM)
        assert post(first_base, body, headers).status_code == 200
        assert post(second_base, body, headers).status_code == 401  # replayed against another server
        assert answers(slack, "pg-replay") == 1
        stores[0].save_link("T0PG", "C0PG", "1.0", "agent-thread", "it")
        link = stores[1].link("T0PG", "C0PG", "1.0")
        assert link is not None and (link.agent_thread_id, link.language) == ("agent-thread", "it")
        assert stores[0].claim("event:Ev1") and not stores[1].claim("event:Ev1")
