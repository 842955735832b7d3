"""The Slack bot end to end: signed requests POSTed to a real uvicorn server on 127.0.0.1, the real offline Advisor,
and Slack's Web API / response_url as a local HTTP server; assertions on the exact Block Kit posted (snapshots)."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest
from fastapi import FastAPI
from pydantic import SecretStr
from slack_bolt.authorization import AuthorizeResult

from agent.faq_answer import answer_question
from agent.parsing.parse import parse_message
from agent.service import Advisor
from agent.writing.format import number
from tests.slack_fakes import (
    BOT_TOKEN,
    BOT_USER,
    SIGNING_SECRET,
    TEAM,
    Call,
    FakeSlack,
    action_body,
    command_body,
    event_body,
    fake_slack,
    mention,
    message,
    offline_advisor,
    serve,
    signed_headers,
)
from tools.memory.estimator import estimate_for_spec
from web.slack.bolt_app import create_bolt_app
from web.slack.events_route import mount_bolt_app
from web.slack.i18n import label, strings, text
from web.slack.mrkdwn import MAX_USER_CHARS, to_mrkdwn
from web.slack.render import answer_body, fallback_text
from web.slack.settings import SlackSettings
from web.slack.store.sqlite import SlackStore

SNAPSHOTS = Path(__file__).parent / "snapshots" / "slack"
JSON = "application/json"
FORM = "application/x-www-form-urlencoded"
JOBS = {
    "it": "QLoRA Llama 3 70B entro domani, vanno bene le spot?",
    "id": "fine-tuning LoRA Mistral 7B, budget 50 USD, pakai spot aman?",
    "en": "full fine-tune llama-3.1-8b on H100, done within 10 hours",
}


def authorize(enterprise_id: str | None, team_id: str | None, logger: Any) -> AuthorizeResult:
    """Offline authorize: the bot's identity without an auth.test call."""
    return AuthorizeResult(
        enterprise_id=enterprise_id, team_id=team_id, bot_token=BOT_TOKEN, bot_id="B0BOT", bot_user_id=BOT_USER
    )


class Stack:
    """The running pieces of one test module."""

    def __init__(self, base: str, slack: FakeSlack, store: SlackStore, advisor: Advisor) -> None:
        self.base, self.slack, self.store, self.advisor = base, slack, store, advisor
        self.counter = 0

    def unique(self, prefix: str) -> str:
        """A fresh id (channel, ts, event id) so tests never see each other's calls."""
        self.counter += 1
        return f"{prefix}{self.counter:04d}"

    def post(self, body: str, content_type: str, **sign: Any) -> httpx2.Response:
        """POST a request to /slack/events signed like Slack (override timestamp/secret/retry via `sign`)."""
        headers = signed_headers(body, content_type=content_type, **sign)
        return httpx2.post(f"{self.base}/slack/events", content=body, headers=headers, timeout=30)

    def event(self, event: dict[str, Any], event_id: str | None = None, **sign: Any) -> httpx2.Response:
        """POST one Events API callback."""
        return self.post(event_body(event, event_id or self.unique("Ev")), JSON, **sign)

    def answered(self, channel: str, updates: int = 1) -> list[Call]:
        """Wait until `channel` got `updates` chat.update calls; returns its calls."""
        self.slack.wait_for(
            lambda calls: (
                len([c for c in calls if c.method == "chat.update" and c.body.get("channel") == channel]) >= updates
            )
        )
        return [c for c in self.slack.calls if c.body.get("channel") == channel]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory):
    """Advisor + Bolt app on real uvicorn + fake Slack, offline (no LLM configured)."""
    home = tmp_path_factory.mktemp("slack-home")
    with offline_advisor(home) as advisor, fake_slack() as slack:
        store = SlackStore(home / "slack.sqlite")
        settings = SlackSettings(bot_token=SecretStr(BOT_TOKEN), signing_secret=SecretStr(SIGNING_SECRET))
        api = FastAPI()
        mount_bolt_app(api, create_bolt_app(settings, advisor, store=store, api_url=slack.url, authorize=authorize))
        with serve(api) as base:
            yield Stack(base, slack, store, advisor)
        store.close()


def normalised(payload: dict[str, Any], thread_id: str | None) -> dict[str, Any]:
    """A posted payload with run-specific values (agent thread id, message ts) replaced by placeholders."""
    text_ = json.dumps({k: payload[k] for k in ("text", "blocks") if k in payload}, ensure_ascii=False, indent=1)
    if thread_id:
        text_ = text_.replace(thread_id, "<thread>")
    return json.loads(text_)


def without_answer_text(payload: dict[str, Any], expected: dict[str, Any]) -> dict[str, Any]:
    """The payload with the advisor's prose (answer section, fallback text) replaced by placeholders, after checking
    it is exactly the fresh answer in mrkdwn: snapshots then pin the Block Kit around the writer's wording."""
    language = expected["language"]
    blocks = payload["blocks"]
    assert blocks[1]["text"]["text"] == to_mrkdwn(answer_body(expected["answer"], language))
    assert payload["text"] == fallback_text(blocks[0]["text"]["text"], expected["answer"], language)
    blocks = [blocks[0], {**blocks[1], "text": {**blocks[1]["text"], "text": "<answer>"}}] + blocks[2:]
    return {"text": "<fallback>", "blocks": blocks}


def check_snapshot(name: str, payload: dict[str, Any]) -> None:
    """Compare with tests/snapshots/slack/<name>.json; write it when missing and SLACK_SNAPSHOT_UPDATE=1."""
    path = SNAPSHOTS / f"{name}.json"
    rendered = json.dumps(payload, ensure_ascii=False, indent=1) + "\n"
    if os.environ.get("SLACK_SNAPSHOT_UPDATE") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rendered, encoding="utf-8")
    assert path.exists(), f"missing snapshot {path}; run with SLACK_SNAPSHOT_UPDATE=1 and review the file"
    assert json.loads(path.read_text(encoding="utf-8")) == payload


def button_value(blocks: list[dict[str, Any]], action_id: str) -> str:
    """The value of a button in the posted blocks."""
    for block in blocks:
        for element in block.get("elements", []) if block["type"] == "actions" else []:
            if element["action_id"] == action_id:
                return element["value"]
    raise AssertionError(f"no button {action_id}")


def table_rows(blocks: list[dict[str, Any]]) -> list[list[str]]:
    """Data rows of the offers table."""
    table = next(b for b in blocks if b["type"] == "table")
    return [[cell["text"] for cell in row] for row in table["rows"][1:]]


def money_value(cell: str) -> float:
    """'$1,234.50' -> 1234.5 (English formatting)."""
    return float(cell.replace("$", "").replace(",", ""))


@pytest.mark.parametrize("language", ["it", "id", "en"])
def test_mention_posts_working_then_updates_it_with_the_answer(stack: Stack, language: str) -> None:
    channel, ts = stack.unique("C"), stack.unique("17000.")
    response = stack.event(mention(JOBS[language], channel=channel, ts=ts))
    assert response.status_code == 200
    calls = stack.answered(channel)
    working, update = calls[0], calls[-1]
    assert working.method == "chat.postMessage" and working.body["thread_ts"] == ts
    assert working.body["text"] == text("working", language)
    assert [c.method for c in calls] == ["chat.postMessage", "chat.update"]
    assert update.body["ts"] and update.body["ts"] != ts
    link = stack.store.link(TEAM, channel, ts)
    assert link is not None and link.language == language
    assert json.loads(button_value(update.body["blocks"], "gpu_cheaper"))["thread"] == link.agent_thread_id
    expected = stack.advisor.respond(JOBS[language])  # a fresh thread: same deterministic answer
    header = update.body["blocks"][0]["text"]["text"]
    top = expected["offers"][0]
    assert top["gpu"] in header  # "8× H100", or "fits on one H100" for a single card
    assert top["total_gpus"] == 1 or f"{top['total_gpus']}× {top['gpu']}" in header
    assert table_rows(update.body["blocks"])[0][1:3] == [top["provider"], top["instance_type"]]
    check_snapshot(f"mention_{language}", without_answer_text(normalised(update.body, link.agent_thread_id), expected))


def test_follow_up_in_the_thread_continues_the_agent_thread(stack: Stack) -> None:
    channel, ts = stack.unique("C"), stack.unique("17001.")
    stack.event(mention(JOBS["en"], channel=channel, ts=ts))
    stack.answered(channel)
    first = stack.store.link(TEAM, channel, ts)
    stack.event(message("the budget is now 5 USD", channel=channel, ts=stack.unique("17002."), thread_ts=ts))
    calls = stack.answered(channel, updates=2)
    second = [c for c in calls if c.method == "chat.update"][-1]
    assert [c.body["thread_ts"] for c in calls if c.method == "chat.postMessage"] == [ts, ts]
    assert stack.store.link(TEAM, channel, ts).agent_thread_id == first.agent_thread_id
    assert "Llama 3.1 8B" in second.body["blocks"][0]["text"]["text"]  # the model came from the first turn


def test_direct_message_is_answered_and_channel_chatter_is_not(stack: Stack) -> None:
    dm, channel = stack.unique("D"), stack.unique("C")
    stack.event(message("hello there, nice weather", channel=channel, ts=stack.unique("17003.")))
    stack.event(message(JOBS["en"], channel=dm, ts=stack.unique("17004."), channel_type="im"))
    stack.answered(dm)
    assert stack.slack.to("chat.postMessage", channel=channel) == []


def test_a_bare_mention_gets_help_in_the_users_language(stack: Stack) -> None:
    channel = stack.unique("C")
    stack.slack.locales["U0MARIO"] = "it-IT"
    stack.event(mention("", channel=channel, ts=stack.unique("17005."), user="U0MARIO"))
    stack.slack.wait_for(
        lambda calls: any(c.method == "chat.postMessage" and c.body.get("channel") == channel for c in calls)
    )
    posted = stack.slack.to("chat.postMessage", channel=channel)[0]
    assert posted.body["blocks"][-1]["text"]["text"] == text("help", "it")
    assert stack.slack.to("users.info")[-1].body["user"] == "U0MARIO"


def test_a_huge_message_is_cut_with_a_note(stack: Stack) -> None:
    channel = stack.unique("C")
    stack.event(mention(JOBS["en"] + " " + "x" * 9000, channel=channel, ts=stack.unique("17006.")))
    update = stack.answered(channel)[-1]
    note = text("truncated", "en", limit=number(MAX_USER_CHARS, "en", 0).replace(",", ""))
    contexts = [b for b in update.body["blocks"] if b["type"] == "context"]
    assert any(e["text"] == note for b in contexts for e in b["elements"])


def test_bad_signature_and_stale_timestamp_are_rejected_and_nothing_runs(stack: Stack) -> None:
    channel = stack.unique("C")
    bad = stack.event(mention(JOBS["en"], channel=channel, ts=stack.unique("17007.")), secret="wrong-secret")
    stale = stack.event(
        mention(JOBS["en"], channel=channel, ts=stack.unique("17008.")), timestamp=int(time.time()) - 6 * 60
    )
    unsigned = httpx2.post(
        f"{stack.base}/slack/events",
        content=event_body(mention("hi", channel=channel, ts="1.0"), "EvX"),
        headers={"content-type": JSON},
        timeout=30,
    )
    command = stack.post(
        command_body("faq spot?", response_url=stack.slack.response_url("bad")), FORM, secret="wrong-secret"
    )
    assert [r.status_code for r in (bad, stale, unsigned, command)] == [401, 401, 401, 401]
    sentinel = stack.unique("C")  # a good request afterwards is answered; the rejected ones left no trace
    stack.event(mention(JOBS["en"], channel=sentinel, ts=stack.unique("17009.")))
    stack.answered(sentinel)
    assert [c for c in stack.slack.calls if c.body.get("channel") == channel] == []
    assert stack.slack.to("response_url", path="/response/bad") == []


def test_slack_retries_never_produce_a_second_answer(stack: Stack) -> None:
    channel, ts, event_id = stack.unique("C"), stack.unique("17010."), stack.unique("EvR")
    event = mention(JOBS["it"], channel=channel, ts=ts)
    assert stack.event(event, event_id).status_code == 200
    stack.answered(channel)
    retries = [stack.event(event, event_id, retry=n) for n in (1, 2)]
    assert [r.status_code for r in retries] == [200, 200]
    assert all(r.headers.get("x-slack-no-retry") == "1" for r in retries)
    # the same message delivered again as a `message` event (new event id) is not answered twice either
    stack.event(message(event["text"], channel=channel, ts=ts))
    stack.event(message("and without spot?", channel=channel, ts=stack.unique("17011."), thread_ts=ts))
    stack.answered(channel, updates=2)
    assert len(stack.slack.to("chat.postMessage", channel=channel)) == 2


def test_slash_command_acks_with_working_then_answers_estimate(stack: Stack) -> None:
    words = "estimate qlora llama-3.1-8b su L4"
    response = stack.post(command_body(words, response_url=stack.slack.response_url("est")), FORM)
    assert response.status_code == 200
    assert response.json() == {"text": text("working", "it"), "response_type": "ephemeral"}
    stack.slack.wait_for(lambda calls: any(c.path == "/response/est" for c in calls))
    payload = stack.slack.to("response_url", path="/response/est")[0].body
    assert payload["replace_original"] is True and payload["response_type"] == "ephemeral"
    spec = parse_message("qlora llama-3.1-8b su L4", lang="it").spec
    expected = estimate_for_spec(spec, gpu=spec.gpu)
    assert payload["blocks"][0]["text"]["text"] == text(
        "header_estimate",
        "it",
        model=expected.model_name,
        method=label("methods", "qlora", "it"),
        per_gpu=number(expected.per_gpu_gib, "it", 1),
    )
    check_snapshot("command_estimate_it", normalised(payload, None))


def test_slash_command_faq_and_free_text(stack: Stack) -> None:
    question = "bolehkah pakai instance spot untuk fine-tuning?"
    stack.post(command_body(f"faq {question}", response_url=stack.slack.response_url("faq")), FORM)
    stack.post(command_body(JOBS["en"], response_url=stack.slack.response_url("job")), FORM)
    stack.post(command_body("", response_url=stack.slack.response_url("help")), FORM)
    stack.slack.wait_for(lambda calls: {"/response/faq", "/response/job", "/response/help"} <= {c.path for c in calls})
    faq = stack.slack.to("response_url", path="/response/faq")[0].body
    expected = answer_question(question)
    cited = [e["text"] for b in faq["blocks"] if b["type"] == "context" for e in b["elements"]][1:]
    assert expected.citations and [c.split("] ", 1)[1].split(" — ")[0] for c in cited] == [
        c.title for c in expected.citations
    ]
    check_snapshot("command_faq_id", normalised(faq, None))
    job = stack.slack.to("response_url", path="/response/job")[0].body
    assert any(b["type"] == "actions" for b in job["blocks"])
    assert stack.slack.to("response_url", path="/response/help")[0].body["blocks"][-1]["text"]["text"] == text(
        "help", "en"
    )


def _answered_job(stack: Stack, words: str) -> tuple[str, str, dict[str, Any]]:
    """Mention the bot with a job; returns (channel, thread ts, final chat.update payload)."""
    channel, ts = stack.unique("C"), stack.unique("17020.")
    stack.event(mention(words, channel=channel, ts=ts))
    return channel, ts, stack.answered(channel)[-1].body


@pytest.mark.parametrize(("action", "column"), [("gpu_cheaper", 8), ("gpu_faster", 7)])
def test_cheaper_and_faster_buttons_rerun_the_job_in_the_thread(stack: Stack, action: str, column: int) -> None:
    channel, ts, first = _answered_job(stack, "LoRA mistral 7b, 200 million tokens")
    value = button_value(first["blocks"], action)
    body = action_body(
        action,
        value,
        channel=channel,
        message_ts=first["ts"],
        thread_ts=ts,
        response_url=stack.slack.response_url("unused"),
    )
    assert stack.post(body, FORM).status_code == 200
    calls = stack.answered(channel, updates=2)
    rerun = [c for c in calls if c.method == "chat.update"][-1].body
    assert [c.body["thread_ts"] for c in calls if c.method == "chat.postMessage"] == [ts, ts]
    rows = table_rows(rerun["blocks"])
    values = [money_value(r[column]) if column == 8 else float(r[column].replace(",", "")) for r in rows]
    assert values[0] == min(values)  # the recommended offer is now the cheapest / fastest shown


def test_no_spot_button_reruns_on_demand_only(stack: Stack) -> None:
    channel, ts, first = _answered_job(stack, "QLoRA llama 3 70B, spot ok")
    value = button_value(first["blocks"], "gpu_no_spot")
    stack.post(
        action_body(
            "gpu_no_spot",
            value,
            channel=channel,
            message_ts=first["ts"],
            thread_ts=ts,
            response_url=stack.slack.response_url("unused"),
        ),
        FORM,
    )
    rerun = [c for c in stack.answered(channel, updates=2) if c.method == "chat.update"][-1].body
    pricing = {row[5] for row in table_rows(rerun["blocks"])}
    assert pricing == {strings("en")["pricing_on_demand"]}
    assert strings("en")["spot"]["not_allowed"] in [
        b["text"]["text"] for b in rerun["blocks"] if b["type"] == "section"
    ]
    assert not any(
        e["action_id"] == "gpu_no_spot" for b in rerun["blocks"] if b["type"] == "actions" for e in b["elements"]
    )


def test_skypilot_button_posts_the_task_of_the_threads_recommendation(stack: Stack) -> None:
    """'SkyPilot task' answers in the thread with the task YAML (code blocks) naming the recommended instance."""
    import yaml

    channel, ts, first = _answered_job(stack, "LoRA llama 3 8B, 10k examples, on aws, spot ok")
    value = button_value(first["blocks"], "gpu_skypilot")
    stack.post(
        action_body(
            "gpu_skypilot",
            value,
            channel=channel,
            message_ts=first["ts"],
            thread_ts=ts,
            response_url=stack.slack.response_url("unused"),
        ),
        FORM,
    )
    answer = [c for c in stack.answered(channel, updates=2) if c.method == "chat.update"][-1].body
    sections = [b["text"]["text"] for b in answer["blocks"] if b["type"] == "section"]
    assert "sky jobs launch" in sections[0] or "sky launch" in sections[0]
    task_text = (
        "".join(s.strip("`") for s in sections[1:]).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    )
    task = yaml.safe_load(task_text)
    offered = [" ".join(row) for row in table_rows(first["blocks"])[:1]]  # the recommended row of the first answer
    assert task["resources"]["infra"].startswith("aws") and task["resources"]["instance_type"] in "".join(offered)


def test_skypilot_button_on_a_provider_skypilot_lacks_says_why(stack: Stack) -> None:
    """An offer SkyPilot cannot launch: the thread gets the task of the best launchable alternative, under a line
    saying which and why, not an apology or silence."""
    import yaml

    channel, ts, first = _answered_job(stack, "LoRA llama 3 8B, 10k examples, on simplepod")
    rows = table_rows(first["blocks"])
    assert rows and "simplepod" in " ".join(rows[0])
    value = button_value(first["blocks"], "gpu_skypilot")
    stack.post(
        action_body(
            "gpu_skypilot",
            value,
            channel=channel,
            message_ts=first["ts"],
            thread_ts=ts,
            response_url=stack.slack.response_url("unused"),
        ),
        FORM,
    )
    answer = [c for c in stack.answered(channel, updates=2) if c.method == "chat.update"][-1].body
    sections = [b["text"]["text"] for b in answer["blocks"] if b["type"] == "section"]
    assert sections[0].startswith("The recommended offer, ") and "simplepod" in sections[0], sections
    assert "cannot be launched with SkyPilot" in sections[0] and "sky launch" in sections[1]
    task = yaml.safe_load(
        "".join(s.strip("`") for s in sections[2:]).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    )
    assert (
        not task["resources"]["infra"].startswith("simplepod")
        and task["resources"]["infra"].split("/")[0] in sections[0]
    )


def test_button_on_an_ephemeral_answer_replies_through_the_response_url(stack: Stack) -> None:
    stack.post(command_body(JOBS["en"], response_url=stack.slack.response_url("eph")), FORM)
    stack.slack.wait_for(lambda calls: any(c.path == "/response/eph" for c in calls))
    value = button_value(stack.slack.to("response_url", path="/response/eph")[0].body["blocks"], "gpu_faster")
    stack.post(
        action_body(
            "gpu_faster",
            value,
            channel="C0CMD",
            message_ts="1.1",
            ephemeral=True,
            response_url=stack.slack.response_url("eph-rerun"),
        ),
        FORM,
    )
    stack.slack.wait_for(lambda calls: any(c.path == "/response/eph-rerun" for c in calls))
    rerun = stack.slack.to("response_url", path="/response/eph-rerun")[0].body
    assert rerun["replace_original"] is False and any(b["type"] == "table" for b in rerun["blocks"])


def test_rejected_table_block_falls_back_to_fields(stack: Stack) -> None:
    stack.slack.reject_tables = True
    try:
        channel, _, final = _answered_job(stack, JOBS["en"])
        updates = stack.slack.to("chat.update", channel=channel)
        while len(updates) < 2:
            updates = stack.answered(channel, updates=2) and stack.slack.to("chat.update", channel=channel)
    finally:
        stack.slack.reject_tables = False
    assert any(b["type"] == "table" for b in updates[0].body["blocks"])
    final = updates[-1].body
    assert not any(b["type"] == "table" for b in final["blocks"])
    assert any(len(b.get("fields", [])) == 3 for b in final["blocks"])


def test_agent_failure_gets_an_apology_with_an_error_id(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    advisor = Advisor(checkpoint_path=tmp_path / "threads.sqlite")
    advisor.close()  # the real agent, broken: its checkpoint database is closed
    settings = SlackSettings(bot_token=SecretStr(BOT_TOKEN), signing_secret=SecretStr(SIGNING_SECRET))
    with fake_slack() as slack:
        api = FastAPI()
        mount_bolt_app(
            api,
            create_bolt_app(
                settings, advisor, store=SlackStore(tmp_path / "s.sqlite"), api_url=slack.url, authorize=authorize
            ),
        )
        with serve(api) as base:
            body = event_body(mention(JOBS["it"], channel="CFAIL", ts="5.5"), "EvFail")
            httpx2.post(f"{base}/slack/events", content=body, headers=signed_headers(body, content_type=JSON))
            slack.wait_for(lambda calls: any(c.method == "chat.update" for c in calls))
    apology = slack.to("chat.update")[0].body["blocks"][-1]["text"]["text"]
    error_id = re.search(r"`([0-9a-f]{12})`", apology).group(1)
    assert apology == text("apology", "it", error_id=error_id)
    assert any(error_id in record.getMessage() and record.exc_info for record in caplog.records)


def test_bad_input_is_explained_not_apologised(stack: Stack) -> None:
    channel, ts, first = _answered_job(stack, JOBS["en"])
    value = json.dumps(
        {
            "thread": json.loads(button_value(first["blocks"], "gpu_faster"))["thread"],
            "lang": "en",
            "method": "sgd-tuning",
        }
    )  # not a method: the advisor raises ValueError
    stack.post(
        action_body(
            "gpu_faster",
            value,
            channel=channel,
            message_ts=first["ts"],
            thread_ts=ts,
            response_url=stack.slack.response_url("unused"),
        ),
        FORM,
    )
    final = [c for c in stack.answered(channel, updates=2) if c.method == "chat.update"][-1].body
    notice = final["blocks"][-1]["text"]["text"]
    assert notice.startswith(text("bad_input", "en", reason="")) and "method" in notice
