"""Slack over real signed HTTP requests (real uvicorn, the real offline Advisor, fake Slack Web API): two workspaces
whose channel and thread ts collide keep separate conversations, and a validly signed body nested too deeply gets one
clear 400 instead of a 500."""

from __future__ import annotations

import json
import urllib.parse

import pytest
from fastapi import FastAPI
from pydantic import SecretStr

from tests.slack_fakes import (
    BOT_TOKEN,
    BOT_USER,
    SIGNING_SECRET,
    event_body,
    fake_slack,
    mention,
    message,
    offline_advisor,
    serve,
)
from tests.test_slack_http import FORM, JOBS, JSON, Stack, authorize
from web.slack.bolt_app import create_bolt_app
from web.slack.events_route import mount_bolt_app
from web.slack.settings import SlackSettings
from web.slack.store.sqlite import SlackStore

DEEP = 20_000


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory):
    """Advisor + Bolt app on real uvicorn + fake Slack, offline."""
    home = tmp_path_factory.mktemp("slack-workspaces")
    with offline_advisor(home) as advisor, fake_slack() as slack:
        store = SlackStore(home / "slack.sqlite")
        settings = SlackSettings(bot_token=SecretStr(BOT_TOKEN), signing_secret=SecretStr(SIGNING_SECRET))
        api = FastAPI()
        mount_bolt_app(api, create_bolt_app(settings, advisor, store=store, api_url=slack.url, authorize=authorize))
        with serve(api) as base:
            yield Stack(base, slack, store, advisor)
        store.close()


def in_workspace(body: str, team: str) -> str:
    """An Events API envelope moved to workspace `team`."""
    envelope = json.loads(body)
    envelope["team_id"] = team
    envelope["event"]["team"] = team
    envelope["authorizations"] = [{"team_id": team, "user_id": BOT_USER, "is_bot": True}]
    return json.dumps(envelope)


def test_two_workspaces_with_the_same_channel_and_thread_ts_never_share_a_conversation(stack: Stack) -> None:
    channel, ts = "C0SHARED", stack.unique("18001.")
    stack.post(in_workspace(event_body(mention(JOBS["en"], channel=channel, ts=ts), stack.unique("Ev")), "T0AAA"), JSON)
    stack.answered(channel)
    stack.post(
        in_workspace(event_body(mention(JOBS["it"], channel=channel, ts=ts), stack.unique("Ev")), "T0BBB"), JSON
    )  # the same message ts in another workspace is its own message, answered too
    stack.answered(channel, updates=2)
    first, second = stack.store.link("T0AAA", channel, ts), stack.store.link("T0BBB", channel, ts)
    assert first is not None and second is not None
    assert first.agent_thread_id != second.agent_thread_id
    assert stack.store.link("T0CCC", channel, ts) is None  # a third workspace has no conversation there


def test_a_follow_up_continues_only_its_own_workspaces_conversation(stack: Stack) -> None:
    channel, ts = "C0SHARED2", stack.unique("18002.")
    stack.post(in_workspace(event_body(mention(JOBS["en"], channel=channel, ts=ts), stack.unique("Ev")), "T0AAA"), JSON)
    stack.answered(channel)
    before = stack.store.link("T0AAA", channel, ts).agent_thread_id
    follow_up = message("the budget is now 5 USD", channel=channel, ts=stack.unique("18003."), thread_ts=ts)
    stack.post(in_workspace(event_body(follow_up, stack.unique("Ev")), "T0BBB"), JSON)  # not B's thread
    stack.post(
        in_workspace(
            event_body(
                message("the budget is now 7 USD", channel=channel, ts=stack.unique("18004."), thread_ts=ts),
                stack.unique("Ev"),
            ),
            "T0AAA",
        ),
        JSON,
    )
    stack.answered(channel, updates=2)
    assert stack.store.link("T0BBB", channel, ts) is None  # B's message in "the same" thread started nothing
    assert stack.store.link("T0AAA", channel, ts).agent_thread_id == before
    assert len(stack.slack.to("chat.update", channel=channel)) == 2  # A's mention and A's follow-up, not B's


@pytest.mark.parametrize("shape", ["json", "form"])
def test_a_signed_body_nested_20000_levels_deep_is_one_clear_400(stack: Stack, shape: str) -> None:
    nested = "[" * DEEP + "]" * DEEP
    if shape == "json":
        body, content_type = '{"type": "event_callback", "event_id": "Ev0DEEP", "x": ' + nested + "}", JSON
    else:
        payload = '{"type": "block_actions", "x": ' + nested + "}"
        body, content_type = "payload=" + urllib.parse.quote(payload), FORM
    response = stack.post(body, content_type)
    assert response.status_code == 400, (response.status_code, response.text[:300])
    assert "nested" in response.text and len(response.text) < 300
    again = stack.post(event_body(mention("", channel="C0AFTER", ts=stack.unique("18005.")), stack.unique("Ev")), JSON)
    assert again.status_code == 200  # the server still answers
