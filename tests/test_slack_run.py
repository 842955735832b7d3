"""Running the bot: `mount` on a FastAPI app from environment variables (the production path, with a lazy
auth.test), Socket Mode against a local WebSocket server, the CLI, and credentials never appearing in logs."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml
from fastapi import FastAPI
from pydantic import SecretStr
from websockets.sync.server import serve as ws_serve

from agent.service import Advisor
from cli.app import main
from tests.slack_fakes import (
    APP_TOKEN,
    BOT_TOKEN,
    SIGNING_SECRET,
    action_body,
    event_body,
    fake_slack,
    mention,
    offline_advisor,
    serve,
    signed_headers,
)
from web.slack import mount, slack_configured
from web.slack.listeners import COMMAND
from web.slack.settings import SlackSettings, load_settings
from web.slack.socket_mode import socket_mode_handler
from web.slack.store.sqlite import SlackStore

ENV = {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET}
JOB = "QLoRA Llama 3 70B entro domani, vanno bene le spot?"


@pytest.fixture(scope="module")
def advisor(tmp_path_factory: pytest.TempPathFactory):
    """The real offline advisor with its files in a temporary home."""
    with offline_advisor(tmp_path_factory.mktemp("home")) as advisor:
        yield advisor


def test_mount_adds_the_route_only_when_both_credentials_are_set(advisor: Advisor, tmp_path: Path) -> None:
    for environ in ({}, {"SLACK_BOT_TOKEN": BOT_TOKEN}, {"SLACK_SIGNING_SECRET": SIGNING_SECRET}):
        api = FastAPI()
        assert mount(api, advisor, environ=environ) is False and not slack_configured(environ)
        assert "/slack/events" not in {route.path for route in api.routes}
    api = FastAPI()
    assert mount(api, advisor, environ=ENV, store=SlackStore(tmp_path / "s.sqlite")) is True
    assert "/slack/events" in {route.path for route in api.routes}


def test_malformed_credentials_are_named_never_echoed() -> None:
    secret_looking = "hunter2-not-a-token-value"
    with pytest.raises(ValueError) as error:
        load_settings(
            socket_mode=False, environ={"SLACK_BOT_TOKEN": secret_looking, "SLACK_SIGNING_SECRET": SIGNING_SECRET}
        )
    assert "SLACK_BOT_TOKEN" in str(error.value) and secret_looking not in str(error.value)
    with pytest.raises(ValueError, match="SLACK_APP_TOKEN"):
        load_settings(socket_mode=True, environ=ENV)
    settings = load_settings(socket_mode=True, environ={**ENV, "SLACK_APP_TOKEN": APP_TOKEN})
    assert BOT_TOKEN not in repr(settings) and APP_TOKEN not in str(settings)
    assert load_settings(socket_mode=False, environ={**ENV, "GPU_ADVISOR_SLACK_TABLES": "0"}).tables is False


def test_mounted_from_env_answers_and_never_logs_credentials(
    advisor: Advisor, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with fake_slack() as slack:
        api = FastAPI()
        mount(api, lambda: advisor, environ=ENV, store=SlackStore(tmp_path / "s.sqlite"), api_url=slack.url)
        with serve(api) as base:
            body = event_body(mention(JOB, channel="CENV", ts="9.1"), "EvEnv")
            response = httpx2.post(
                f"{base}/slack/events", content=body, headers=signed_headers(body, content_type="application/json")
            )
            assert response.status_code == 200
            slack.wait_for(lambda calls: any(c.method == "chat.update" for c in calls))
    methods = [c.method for c in slack.calls]
    assert methods[0] == "auth.test" and methods[-2:] == ["chat.postMessage", "chat.update"]
    assert all(c.headers["authorization"] == f"Bearer {BOT_TOKEN}" for c in slack.calls)
    assert any(r.name.startswith("slack_sdk") for r in caplog.records)  # the SDK did log its requests...
    for secret in (BOT_TOKEN, SIGNING_SECRET, BOT_TOKEN.removeprefix("xoxb-")):
        assert secret not in caplog.text  # ...but never a credential


def test_socket_mode_receives_acks_and_answers(advisor: Advisor, tmp_path: Path) -> None:
    acks: list[dict[str, Any]] = []
    acked = threading.Event()
    envelope = {
        "envelope_id": "env-1",
        "type": "events_api",
        "accepts_response_payload": False,
        "retry_attempt": 0,
        "retry_reason": "",
        "payload": json.loads(event_body(mention(JOB, channel="CSOCK", ts="8.1"), "EvSock")),
    }

    def session(ws: Any) -> None:
        """Say hello, deliver one event, wait for its acknowledgement."""
        ws.send(json.dumps({"type": "hello", "num_connections": 1}))
        ws.send(json.dumps(envelope))
        for raw in ws:
            acks.append(json.loads(raw))
            acked.set()

    with fake_slack() as slack, ws_serve(session, "127.0.0.1", 0) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        slack.socket_url = f"ws://127.0.0.1:{server.socket.getsockname()[1]}/"
        settings = SlackSettings(bot_token=SecretStr(BOT_TOKEN), app_token=SecretStr(APP_TOKEN))
        handler = socket_mode_handler(settings, advisor, store=SlackStore(tmp_path / "s.sqlite"), api_url=slack.url)
        handler.connect()
        try:
            assert acked.wait(20)
            slack.wait_for(lambda calls: any(c.method == "chat.update" for c in calls))
        finally:
            handler.close()
            server.shutdown()
    assert acks[0] == {"envelope_id": "env-1"}
    opened = [c for c in slack.calls if c.method == "apps.connections.open"]
    assert opened and opened[0].headers["authorization"] == f"Bearer {APP_TOKEN}"
    update = next(c for c in slack.calls if c.method == "chat.update").body
    assert update["channel"] == "CSOCK" and update["blocks"][0]["type"] == "header"


def test_cli_explains_what_is_missing(capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["slack"]) == 2
    assert "--socket" in capsys.readouterr().err
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    assert main(["slack", "--socket"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "SLACK_BOT_TOKEN and SLACK_APP_TOKEN" in err


def test_manifest_matches_what_the_bot_listens_to(capsys: pytest.CaptureFixture) -> None:
    assert main(["slack", "--manifest", "--json"]) == 0
    manifest = json.loads(capsys.readouterr().out)
    assert manifest == yaml.safe_load((Path(__file__).parents[1] / "slack" / "manifest.yaml").read_text())
    assert [c["command"] for c in manifest["features"]["slash_commands"]] == [COMMAND]
    events = manifest["settings"]["event_subscriptions"]
    assert {"app_mention", "message.im", "message.channels"} <= set(events["bot_events"])
    assert {"app_mentions:read", "chat:write", "commands", "im:history", "channels:history", "users:read"} <= set(
        manifest["oauth_config"]["scopes"]["bot"]
    )
    urls = {
        events["request_url"],
        manifest["settings"]["interactivity"]["request_url"],
        manifest["features"]["slash_commands"][0]["url"],
    }
    assert len(urls) == 1 and urls.pop().endswith("/slack/events")


def test_the_api_server_mounts_the_bot_and_lets_real_sized_button_clicks_through(
    advisor: Advisor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from web.app import create_app
    from web.settings import ServerSettings

    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    with fake_slack() as slack:
        monkeypatch.setenv("GPU_ADVISOR_SLACK_API_URL", slack.url)
        api = create_app(ServerSettings(), advisor_factory=lambda settings: advisor)
        with serve(api, lifespan="on") as base:
            body = event_body(mention(JOB, channel="CAPP", ts="7.1"), "EvApp")
            headers = signed_headers(body, content_type="application/json")
            assert httpx2.post(f"{base}/slack/events", content=body, headers=headers).status_code == 200
            slack.wait_for(lambda calls: any(c.method == "chat.update" for c in calls))
            answer = next(c for c in slack.calls if c.method == "chat.update").body
            value = next(e["value"] for b in answer["blocks"] if b["type"] == "actions" for e in b["elements"])
            click = action_body(
                "gpu_no_spot",
                value,
                channel="CAPP",
                message_ts=answer["ts"],
                thread_ts="7.1",
                response_url=slack.response_url("app"),
                blocks=answer["blocks"],
            )
            response = httpx2.post(
                f"{base}/slack/events",
                content=click,
                headers=signed_headers(click, content_type="application/x-www-form-urlencoded"),
            )
            assert response.status_code == 200, (len(click), response.text)  # not 413 from the body-size limit
            slack.wait_for(lambda calls: len([c for c in calls if c.method == "chat.update"]) >= 2)
            forged = httpx2.post(f"{base}/slack/events", content=body, headers={**headers, "x-slack-signature": "v0=0"})
            assert forged.status_code == 401
