"""The widget while an answer is on its way, and after the network failed, in a real browser (Debian's chromium).

The waiting view is caught with a relay on 127.0.0.1 between the browser and the real server: it passes every
request and every streamed event through as it comes, and holds only the `final` event until the test has looked.
Screenshots: artifacts/widget-{desktop,phone}-it-{waiting,retry}.png (1280x800 and 375x812)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx2
import pytest

from tests.test_web_widget import ANSWERS, I18N, ITALIAN_JOB, open_page, shot, stored_state, sync_api, wait_answer
from tests.web_server import CHROMIUM_FLAGS, chromium_path, outside_box, serve, test_settings
from tools.catalog import ensure_db

SIZES = [pytest.param(1280, 800, "desktop", id="1280x800"), pytest.param(375, 812, "phone", id="375x812")]
PROGRESS_IT = json.loads((Path(__file__).resolve().parents[1] / "prompts" / "it" / "progress.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    """The real app and Advisor on 127.0.0.1."""
    catalog = ensure_db(tmp_path_factory.mktemp("catalog") / "catalog.sqlite")
    with serve(test_settings(tmp_path_factory.mktemp("threads"), catalog)) as running:
        yield running


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium, headless."""
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


@contextmanager
def holding_relay(upstream: str) -> Iterator[tuple[str, threading.Event, list[str]]]:
    """A relay to `upstream` serving a page with the one-tag embed pointing at itself; yields (its origin, the event
    that lets held `final` events go, the names of the events relayed so far)."""
    release = threading.Event()
    relayed: list[str] = []

    class Relay(BaseHTTPRequestHandler):
        def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
            """One plain response."""
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            """The host page, or what the server answers."""
            if self.path == "/":
                origin = f"http://127.0.0.1:{self.server.server_address[1]}"
                page = (
                    f'<!doctype html><html lang="it"><head><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,"><title>relay</title>'
                    f'</head><body><main><h1>Pagina ospite</h1></main><script src="{origin}/widget/widget.js" '
                    f'data-api="{origin}" data-lang="it" defer></script></body></html>'
                )
                self._send(200, {"Content-Type": "text/html; charset=utf-8"}, page.encode())
                return
            answer = httpx2.get(upstream + self.path, timeout=60)
            self._send(
                answer.status_code, {"Content-Type": answer.headers.get("content-type", "text/plain")}, answer.content
            )

        def do_POST(self) -> None:
            """The chat stream, event by event, holding `final` until released."""
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with httpx2.stream(
                "POST", upstream + self.path, content=body, timeout=60, headers={"Content-Type": "application/json"}
            ) as answer:
                self.send_response(answer.status_code)
                for name in ("content-type", "x-thread-id", "x-thread-token"):
                    if name in answer.headers:
                        self.send_header(name, answer.headers[name])
                self.end_headers()
                buffer = ""
                for text in answer.iter_text():
                    buffer += text
                    *blocks, buffer = re.split(r"\r?\n\r?\n", buffer)
                    for block in blocks:
                        name = next((line[6:].strip() for line in block.splitlines() if line.startswith("event:")), "")
                        if name == "final":
                            release.wait(60)
                        relayed.append(name)
                        self.wfile.write((block + "\r\n\r\n").encode())
                        self.wfile.flush()
                self.wfile.write(buffer.encode())

        def log_message(self, *args: object) -> None:
            """Quiet."""

    relay = ThreadingHTTPServer(("127.0.0.1", 0), Relay)
    thread = threading.Thread(target=relay.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{relay.server_address[1]}", release, relayed
    finally:
        release.set()
        relay.shutdown()
        relay.server_close()


@pytest.mark.parametrize("width, height, name", SIZES)
def test_while_waiting_the_bubble_shows_the_step_running_and_the_verdict_card_once_known(
    browser, server, width, height, name
):
    problems: list[str] = []
    context, page = open_page(
        browser, width, height, problems, **({"is_mobile": True, "has_touch": True} if width < 500 else {})
    )
    try:
        with holding_relay(server.url) as (origin, release, relayed):
            page.goto(origin + "/")
            page.get_by_role("button", name=I18N["it"]["open"]).click()
            page.locator("#ga-input").fill(ITALIAN_JOB)
            page.locator("#ga-input").press("Enter")
            waiting = page.locator(ANSWERS).last
            card = waiting.locator(".verdict-preview .verdict")
            sync_api.expect(card.locator(".verdict-gpus")).to_be_visible()  # the card, before the answer exists
            assert "final" not in relayed and "verdict" in relayed
            sync_api.expect(waiting.locator(".wait .wait-text")).to_have_text(PROGRESS_IT["write"])  # step now
            sync_api.expect(waiting.locator(".wait .spinner")).to_be_visible()
            assert waiting.locator(".steps li").count() >= 3
            assert waiting.locator(".md").count() == 0  # no answer text yet: only the status and the card
            assert not outside_box(card.bounding_box(), page.locator(".log").bounding_box())
            assert page.evaluate("() => document.documentElement.scrollWidth") <= width
            shown = card.locator(".verdict-gpus").inner_text()
            shot(page, f"widget-{name}-it-waiting")
            release.set()
            result = wait_answer(page, 0)
            answer = page.locator(ANSWERS).last
            sync_api.expect(answer.locator(".wait, .verdict-preview")).to_have_count(0)  # replaced by the answer
            sync_api.expect(answer.locator(".verdict")).to_have_count(1)
            best = result["offers"][0]
            assert shown == f"{best['total_gpus']}× {best['gpu']}" == answer.locator(".verdict-gpus").inner_text()
    finally:
        context.close()
    assert problems == []


@pytest.mark.parametrize("width, height, name", SIZES)
def test_with_the_network_down_the_message_is_kept_and_retry_sends_it(browser, server, width, height, name):
    problems: list[str] = []
    context, page = open_page(
        browser, width, height, problems, **({"is_mobile": True, "has_touch": True} if width < 500 else {})
    )
    try:
        page.goto(server.url + "/demo")
        page.get_by_role("button", name=I18N["it"]["open"]).click()
        context.set_offline(True)
        page.locator("#ga-input").fill(ITALIAN_JOB)
        page.locator("#ga-input").press("Enter")
        error = page.locator(".bubble.error")
        sync_api.expect(error.locator("[role=alert]")).to_have_text(I18N["it"]["errors"]["network"])
        sync_api.expect(page.locator("#ga-input")).to_have_value(ITALIAN_JOB)  # not lost
        retry = error.get_by_role("button", name=I18N["it"]["retry"])
        sync_api.expect(retry).to_be_visible()
        assert not outside_box(retry.bounding_box(), page.locator(".log").bounding_box())
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width
        shot(page, f"widget-{name}-it-retry")

        context.set_offline(False)
        page.reload()  # the failed turn and its retry survive a reload
        page.get_by_role("button", name=I18N["it"]["open"]).click()
        retry = page.locator(".bubble.error").get_by_role("button", name=I18N["it"]["retry"])
        sync_api.expect(retry).to_be_visible()
        with page.expect_request("**/api/chat/stream") as request_info:
            retry.click()
        assert request_info.value.post_data_json == {"message": ITALIAN_JOB}
        result = wait_answer(page, 0)
        assert result["language"] == "it"
        sync_api.expect(page.locator(".bubble.user p")).to_have_text([ITALIAN_JOB])  # sent once, shown once
        sync_api.expect(page.locator(".bubble.error")).to_have_count(0)
        assert [turn["role"] for turn in stored_state(page)["turns"]] == ["user", "assistant"]
    finally:
        context.close()
    assert [p for p in problems if "ERR_INTERNET_DISCONNECTED" not in p] == []
