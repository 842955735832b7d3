"""Slack bot latency over real HTTP on 127.0.0.1: how fast Slack gets its acknowledgement (the 3-second rule) versus
when the answer lands (the 'working on it' message updated in place), for mentions and /gpu commands.

Run: .venv/bin/python -m benchmarks.slack_latency   (from the repository root)
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx2
from fastapi import FastAPI
from pydantic import SecretStr
from slack_bolt.authorization import AuthorizeResult

from agent.service import Advisor
from tests.slack_fakes import (
    BOT_TOKEN,
    BOT_USER,
    SIGNING_SECRET,
    command_body,
    event_body,
    fake_slack,
    mention,
    serve,
    signed_headers,
)
from web.slack.bolt_app import create_bolt_app
from web.slack.events_route import mount_bolt_app
from web.slack.settings import SlackSettings
from web.slack.store.sqlite import SlackStore

JOBS = [
    "QLoRA Llama 3 70B entro domani, vanno bene le spot?",
    "fine-tuning LoRA Mistral 7B, budget 50 USD",
    "full fine-tune llama-3.1-8b on H100, done within 10 hours",
    "can I use spot instances for fine-tuning?",
]
ROUNDS = 5


def _authorize(enterprise_id: str | None, team_id: str | None, logger: object) -> AuthorizeResult:
    """The bot's identity without auth.test."""
    return AuthorizeResult(
        enterprise_id=enterprise_id, team_id=team_id, bot_token=BOT_TOKEN, bot_id="B0BOT", bot_user_id=BOT_USER
    )


def _ms(values: list[float]) -> str:
    """p50 / p95 / max in milliseconds."""
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (
        f"p50 {statistics.median(ordered) * 1000:7.1f} ms  p95 {p95 * 1000:7.1f} ms  max {ordered[-1] * 1000:7.1f} ms"
    )


def main() -> None:
    """Post mentions and /gpu commands, time the HTTP acknowledgement and the final answer."""
    home = Path(tempfile.mkdtemp(prefix="slack-bench-"))
    os.environ["GPU_ADVISOR_HOME"] = str(home)
    advisor = Advisor(checkpoint_path=home / "threads.sqlite")
    settings = SlackSettings(bot_token=SecretStr(BOT_TOKEN), signing_secret=SecretStr(SIGNING_SECRET))
    acks: dict[str, list[float]] = {"mention": [], "command": []}
    answers: dict[str, list[float]] = {"mention": [], "command": []}
    with fake_slack() as slack:
        api = FastAPI()
        mount_bolt_app(
            api,
            create_bolt_app(
                settings, advisor, store=SlackStore(home / "slack.sqlite"), api_url=slack.url, authorize=_authorize
            ),
        )
        with serve(api) as base, httpx2.Client(base_url=base, timeout=30) as http:
            for n in range(ROUNDS * len(JOBS)):
                job, channel = JOBS[n % len(JOBS)], f"CB{n:04d}"
                body = event_body(mention(job, channel=channel, ts=f"{n}.1"), f"EvB{n}")
                start = time.perf_counter()
                http.post("/slack/events", content=body, headers=signed_headers(body, content_type="application/json"))
                acks["mention"].append(time.perf_counter() - start)
                slack.wait_for(
                    lambda calls, channel=channel: any(
                        c.method == "chat.update" and c.body.get("channel") == channel for c in calls
                    )
                )
                answers["mention"].append(time.perf_counter() - start)
                body = command_body(job, response_url=slack.response_url(f"b{n}"))
                start = time.perf_counter()
                http.post(
                    "/slack/events",
                    content=body,
                    headers=signed_headers(body, content_type="application/x-www-form-urlencoded"),
                )
                acks["command"].append(time.perf_counter() - start)
                slack.wait_for(lambda calls, n=n: any(c.path == f"/response/b{n}" for c in calls))
                answers["command"].append(time.perf_counter() - start)
    advisor.close()
    print(f"{ROUNDS * len(JOBS)} requests of each kind, offline advisor, uvicorn on 127.0.0.1")
    for kind in ("mention", "command"):
        print(f"{kind:8s} acknowledged  {_ms(acks[kind])}")
        print(f"{kind:8s} answered      {_ms(answers[kind])}")
    print("reproduce: .venv/bin/python -m benchmarks.slack_latency")


if __name__ == "__main__":
    main()
