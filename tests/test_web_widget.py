"""The embeddable widget in a real browser (Debian's chromium via Playwright) against the real server and Advisor.

Screenshots go to artifacts/ (gitignored) for people to look at: widget-desktop-*.png (1280 px) and
widget-phone-*.png (375 px)."""

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

from tests.shared_data import import_or_unavailable
from tests.web_server import (
    ARTIFACTS,
    CHROMIUM_FLAGS,
    chromium_path,
    outside_box,
    parse_sse,
    require_chromium,
    serious_axe_violations,
    serve,
    test_settings,
    without_thread,
)
from tools.catalog.query import ensure_db

ITALIAN_JOB = "QLoRA su Llama 3 8B, budget 50 euro, vanno bene le spot?"
FOLLOW_UP = "facciamo 2 GPU"
ENGLISH_FOLLOW_UP = "please make it 4 GPUs and keep the rest the same"
XSS = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2"> QLoRA su Llama 3 8B'
I18N = json.loads((Path(__file__).resolve().parents[1] / "web" / "static" / "i18n.json").read_text("utf-8"))
ANSWERS = ".bubble.assistant:not(.greeting)"

require_chromium()
sync_api = import_or_unavailable("playwright.sync_api", module_level=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    """The real app and Advisor on 127.0.0.1."""
    catalog = ensure_db(tmp_path_factory.mktemp("catalog") / "catalog.sqlite")
    with serve(test_settings(tmp_path_factory.mktemp("threads"), catalog)) as running:
        yield running


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium, headless, with no background networking (the machine has no outside network)."""
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


def open_page(browser, width: int, height: int, problems: list[str], **options):
    """A fresh context and page (own localStorage); console and page errors are collected into `problems`."""
    context = browser.new_context(viewport={"width": width, "height": height}, locale="it-IT", **options)
    opened = context.new_page()
    opened.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    opened.on("pageerror", lambda error: problems.append(str(error)))
    return context, opened


@pytest.fixture
def page(browser):
    """A 1280 px page that fails the test on any console error or page error."""
    problems: list[str] = []
    context, opened = open_page(browser, 1280, 900, problems)
    yield opened
    context.close()
    assert problems == []


def shot(page, name: str) -> None:
    """Save a screenshot under artifacts/."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def stored_state(page) -> dict:
    """The widget's saved state (thread id, turns with the results it received) from localStorage."""
    key = page.evaluate("() => Object.keys(localStorage).find(k => k.startsWith('gpu-advisor:'))")
    return json.loads(page.evaluate("k => localStorage.getItem(k)", key))


def wait_answer(page, before: int) -> dict:
    """Wait for answer number `before + 1` to be complete; the result the widget received."""
    sync_api.expect(page.locator(ANSWERS)).to_have_count(before + 1)
    sync_api.expect(page.locator(".log")).not_to_have_attribute("aria-busy", "true")
    turn = stored_state(page)["turns"][-1]
    assert turn["role"] == "assistant", turn
    assert page.locator(ANSWERS).last.locator(".steps li").count() >= 3  # progress events were shown while it streamed
    return turn["result"]


def ask(page, text: str) -> tuple[dict, dict]:
    """Type a message, press Enter, wait for the streamed answer; returns (request body, result received)."""
    before = page.locator(ANSWERS).count()
    with page.expect_request("**/api/chat/stream") as request_info:
        page.locator("#ga-input").fill(text)
        page.locator("#ga-input").press("Enter")
    return request_info.value.post_data_json, wait_answer(page, before)


def streamed_directly(server, message: str) -> list[tuple[str, dict]]:
    """The same request sent without the browser (a new thread), parsed."""
    with httpx2.stream("POST", server.url + "/api/chat/stream", json={"message": message}, timeout=60) as response:
        return parse_sse("".join(response.iter_text()))


def shadow_active_id(page) -> str | None:
    """The id of the element focused inside the widget's shadow root."""
    return page.evaluate("() => document.querySelector('#gpu-advisor-widget').shadowRoot.activeElement?.id ?? null")


def distinct_offers(offers: list[dict]) -> list[dict]:
    """Offers as the table shows them: one per instance, pricing, price and cost (regions merged)."""
    seen, out = set(), []
    for o in offers:
        key = (
            o["provider"],
            o["instance_type"],
            o["total_gpus"],
            o["spot"],
            round(o["price_per_hour"], 4),
            round(o["est_cost"], 4),
        )
        if key not in seen:
            seen.add(key)
            out.append(o)
    return out


def assert_verdict_in_view(page, answer, result: dict) -> None:
    """The answer's verdict card is inside the visible part of the chat log (no scrolling needed) and says the
    recommendation: GPUs, provider, region, total cost and time, pricing."""
    best = result["offers"][0]
    verdict = answer.locator(".verdict")
    sync_api.expect(verdict.locator(".verdict-gpus")).to_have_text(f"{best['total_gpus']}× {best['gpu']}")
    sync_api.expect(verdict.locator(".verdict-where")).to_contain_text(best["provider"])
    if best["region"]:  # offers whose catalog names no region show the provider alone
        sync_api.expect(verdict.locator(".verdict-where")).to_contain_text(best["region"])
    sync_api.expect(verdict.locator("dd.hours")).not_to_have_text("–")
    sync_api.expect(verdict.locator("dd.cost")).to_contain_text("USD")
    lang = page.evaluate("() => document.querySelector('#gpu-advisor-widget').getAttribute('lang')")
    pricing = I18N[lang]["spot_badge"] if best["spot"] else I18N[lang]["on_demand_badge"]
    sync_api.expect(verdict.locator(".badge").first).to_have_text(pricing)
    if best["meets_budget"] is not None:
        sync_api.expect(verdict.locator(".badge.ok, .badge.bad").first).to_have_text(
            I18N[lang]["fits_budget"] if best["meets_budget"] else I18N[lang]["over_budget_badge"]
        )
    assert not outside_box(verdict.bounding_box(), page.locator(".log").bounding_box())


def assert_table_fits(page, answer) -> None:
    """Open the offers section: no column is cut off (every cell inside the table's box, which is inside the panel,
    and nothing to scroll sideways); instance ids are not broken mid-word."""
    section = answer.locator("details.section.offers")
    if section.get_attribute("open") is None:
        section.locator("> summary").click()
    scroll = answer.locator(".scroll")
    scroll.scroll_into_view_if_needed()
    assert scroll.evaluate("n => n.scrollWidth <= n.clientWidth + 1"), "the table scrolls sideways"
    panel = page.locator("#ga-panel").bounding_box()
    box = scroll.bounding_box()
    assert not outside_box({**box, "height": 1}, panel)
    for cell in answer.locator("table.offers th, table.offers td").all():
        if cell.is_visible():
            assert not outside_box({**cell.bounding_box(), "height": 1, "y": box["y"]}, {**box, "height": 2}), (
                cell.inner_text()
            )
    assert answer.locator("small.instance").first.evaluate("n => getComputedStyle(n).overflowWrap") == "normal"


def check_rendered(page, answer, result: dict, lang: str) -> None:
    """The answer bubble shows this result: verdict, lead text, memory bar, offers table, chart, citations."""
    strings = I18N[lang]
    assert_verdict_in_view(page, answer, result)
    first_paragraph = result["answer"].split("\n")[0].replace("**", "").replace("`", "")
    sync_api.expect(answer.locator(".md p").first).to_contain_text(first_paragraph[:40])
    table_offers = distinct_offers(result["offers"])
    rows = answer.locator("table.offers tbody tr")
    sync_api.expect(rows).to_have_count(len(table_offers))  # every offer received, and the title counts the rows
    sync_api.expect(answer.locator("details.section.offers > summary .summary-extra")).to_have_text(
        f" · {len(table_offers)}"
    )
    in_order = table_offers[:1] + sorted(table_offers[1:], key=lambda o: (o["est_cost"], o["est_hours"]))
    separators = (".", ",") if lang in ("it", "id") else (",", ".")
    shown_costs = [
        float(text.replace(separators[0], "").replace(separators[1], "."))
        for text in rows.locator("td.num:nth-child(4) > span").all_text_contents()
    ]
    assert shown_costs == [round(o["est_cost"], 2) for o in in_order]  # the caption's order: best, then by cost
    sync_api.expect(answer.locator("table.offers caption")).to_have_text(strings["offers_caption"])
    best = result["offers"][0]
    sync_api.expect(rows.first).to_have_class("best")
    sync_api.expect(rows.first.locator("th")).to_contain_text(f"{best['total_gpus']}× {best['gpu']}")
    sync_api.expect(rows.first.locator("td.provider .instance")).to_have_text(best["instance_type"])
    sync_api.expect(answer.locator("table.offers thead th")).to_have_text(
        [strings[k] for k in ("col_gpu", "col_provider", "col_region", "col_cost", "col_hours", "col_price")]
    )
    parts = [k for k, v in result["estimate"]["breakdown_gib"].items() if v > 0]
    sync_api.expect(answer.locator("svg.memory rect.seg")).to_have_count(len(parts))
    legend = answer.locator(".memory-legend li").all_text_contents()
    assert [item.split(" ")[0] for item in legend] == [strings["breakdown"].get(k, k).split(" ")[0] for k in parts]
    fitting = [o for o in table_offers if o["fits"] is not False]
    sync_api.expect(answer.locator("svg.cost-time circle.dot")).to_have_count(len(fitting))
    sync_api.expect(answer.locator("svg.cost-time circle.dot.best")).to_have_count(1)
    sync_api.expect(answer.locator(".cost-legend li")).to_have_count(3)
    sync_api.expect(answer.locator(".citations details")).to_have_count(len(result["citations"]))
    links = answer.locator("a.compare-link")  # in the verdict card and under the table: the same job link
    sync_api.expect(links).to_have_count(2)
    assert links.first.get_attribute("href") == links.last.get_attribute("href")
    assert "/compare?job=" in links.first.get_attribute("href")


def assert_tick_labels_match_values(answer, lang: str) -> None:
    """Every axis tick shows its own value (as many decimals as the step needs), in the interface locale."""
    decimal = "," if lang in ("it", "id") else "."
    for tick in answer.locator("svg.cost-time text.tick").all():
        value = float(tick.get_attribute("data-value"))
        shown = tick.text_content().replace("." if decimal == "," else ",", "").replace(decimal, ".")
        assert float(shown) == pytest.approx(value, abs=1e-9), (tick.text_content(), value)


def test_italian_conversation_verdict_first_language_stable_and_survives_reload(page, server):
    page.goto(server.url + "/demo")
    launcher = page.get_by_role("button", name=I18N["it"]["open"])
    sync_api.expect(launcher).to_have_attribute("aria-expanded", "false")
    launcher.focus()
    page.keyboard.press("Enter")  # keyboard opens it
    sync_api.expect(page.get_by_role("dialog", name=I18N["it"]["title"])).to_be_visible()
    sync_api.expect(launcher).to_have_attribute("aria-expanded", "true")
    assert shadow_active_id(page) == "ga-input"

    request, first = ask(page, ITALIAN_JOB)
    assert request == {"message": ITALIAN_JOB}  # no language forced: the advisor detects Italian
    assert first["language"] == "it"
    direct = streamed_directly(server, ITALIAN_JOB)
    assert without_thread(first) == without_thread(direct[-1][1]["result"])  # what the browser received
    answer = page.locator(ANSWERS).last
    sync_api.expect(answer.locator(".steps li")).to_have_text([d["label"] for n, d in direct if n == "progress"])
    shot(page, "widget-desktop-it-verdict")
    check_rendered(page, answer, first, "it")
    assert_table_fits(page, answer)
    assert_tick_labels_match_values(answer, "it")
    shot(page, "widget-desktop-it-offers")
    answer.locator("details.section.memory > summary").click()
    answer.locator("details.section.sources > summary").click()
    answer.locator(".citations summary").first.click()
    sync_api.expect(answer.locator(".citations details").first).to_have_attribute("open", "")
    assert serious_axe_violations(page) == []

    request, second = ask(page, FOLLOW_UP)
    assert request == {"message": FOLLOW_UP, "thread_id": first["thread_id"], "thread_token": first["thread_token"]}
    assert second["thread_id"] == first["thread_id"] and second["spec"]["num_gpus"] == 2
    answer = page.locator(ANSWERS).last
    assert_verdict_in_view(page, answer, second)  # the view lands on the new answer's start, not its sources
    sync_api.expect(answer.locator(".changes-title")).to_have_text(I18N["it"]["changed_title"])
    before, after = first["offers"][0], second["offers"][0]
    changes = answer.locator(".changes li")
    if "num_gpus" in second.get("changed", ["num_gpus"]):  # the field the user changed, before -> after
        sync_api.expect(changes.first).to_have_text(f"{I18N['it']['field']['num_gpus']}: – → 2")
    if (before["total_gpus"], before["gpu"]) != (after["total_gpus"], after["gpu"]):  # how the recommendation moved
        sync_api.expect(changes.filter(has_text=re.compile("^GPU: "))).to_have_text(
            f"GPU: {before['total_gpus']}× {before['gpu']} → {after['total_gpus']}× {after['gpu']}"
        )
    shot(page, "widget-desktop-it-follow-up")

    # An English message does not switch the interface: only the language menu does; the answer is in English.
    request, third = ask(page, ENGLISH_FOLLOW_UP)
    assert "language" not in request and third["language"] == "en"
    assert third["spec"]["num_gpus"] == 4 and third["spec"]["model"] == first["spec"]["model"]
    sync_api.expect(page.get_by_role("dialog", name=I18N["it"]["title"])).to_be_visible()
    sync_api.expect(page.locator("#ga-input")).to_have_attribute("placeholder", I18N["it"]["placeholder"])
    sync_api.expect(page.locator("#ga-lang")).to_have_value("it")
    answer = page.locator(ANSWERS).last
    check_rendered(page, answer, third, "it")
    sync_api.expect(answer.locator(".chip").first).to_have_text(I18N["en"]["chip_cheaper"])  # chips: user's language
    shot(page, "widget-desktop-english-message-italian-ui")

    page.locator("#ga-lang").select_option("en")
    sync_api.expect(page.get_by_role("dialog", name=I18N["en"]["title"])).to_be_visible()
    sync_api.expect(page.locator("#ga-input")).to_have_attribute("placeholder", I18N["en"]["placeholder"])
    sync_api.expect(page.locator("table.offers thead th").nth(1)).to_have_text(I18N["en"]["col_provider"])

    page.keyboard.press("Escape")
    sync_api.expect(page.locator("#ga-panel")).to_be_hidden()
    assert page.evaluate("() => document.activeElement?.id") == "gpu-advisor-widget"  # focus back on the launcher
    assert shadow_active_id(page) in (None, "")

    page.reload()
    page.get_by_role("button", name=I18N["en"]["open"]).click()  # the language the user picked is kept
    sync_api.expect(page.locator(".bubble.user p")).to_have_text([ITALIAN_JOB, FOLLOW_UP, ENGLISH_FOLLOW_UP])
    sync_api.expect(page.locator(".thread code")).to_have_text(first["thread_id"])
    sync_api.expect(page.locator(".verdict")).to_have_count(3)
    assert not outside_box(page.locator(".verdict").last.bounding_box(), page.locator(".log").bounding_box())
    request, fourth = ask(page, FOLLOW_UP)  # Italian words, English chosen in the menu: the answer is English
    assert request["thread_id"] == first["thread_id"] and fourth["spec"]["model"] == first["spec"]["model"]
    assert request["thread_token"] == first["thread_token"] == stored_state(page)["threadToken"]  # kept on reload
    assert request["language"] == "en" and fourth["language"] == "en"


def test_a_saved_thread_the_server_does_not_know_says_so_and_the_next_message_starts_anew(browser, server):
    problems: list[str] = []
    context, page = open_page(browser, 1280, 900, problems)
    try:
        _saved_thread_unknown(page, server)
    finally:
        context.close()
    assert [p for p in problems if "status of 404" not in p] == []  # the browser logs the expected 404 itself


def _saved_thread_unknown(page, server) -> None:
    """A widget whose saved thread id is '1' (never minted for it) gets thread_not_found, then a new thread."""
    page.goto(server.url + "/demo")
    page.evaluate(
        "api => localStorage.setItem('gpu-advisor:v2:' + api, JSON.stringify({threadId: '1', turns: []}))", server.url
    )
    page.reload()
    page.get_by_role("button", name=I18N["it"]["open"]).click()
    with page.expect_response("**/api/chat/stream") as response_info:
        page.locator("#ga-input").fill("QLoRA su Llama 3 8B")
        page.locator("#ga-input").press("Enter")
    assert response_info.value.status == 404
    sync_api.expect(page.locator(".bubble.error [role=alert]")).to_have_text(I18N["it"]["errors"]["thread_not_found"])
    request, result = ask(page, "QLoRA su Llama 3 8B")
    assert "thread_id" not in request and result["thread_id"] != "1"
    assert stored_state(page)["threadToken"] == result["thread_token"]


def test_quick_reply_chips_by_keyboard_in_the_users_language(page, server):
    page.goto(server.url + "/demo")
    page.get_by_role("button", name=I18N["it"]["open"]).click()
    _, first = ask(page, "QLoRA su Llama 3 8B, budget 50 euro")
    chips = page.locator(ANSWERS).last.locator(".chip")
    labels = chips.all_text_contents()
    assert labels[:2] == [I18N["it"]["chip_cheaper"], I18N["it"]["chip_faster"]]
    assert (I18N["it"]["chip_one_gpu"] in labels) == (first["offers"][0]["total_gpus"] != 1)
    assert I18N["it"]["chip_spot"] in labels  # spot not allowed yet in this job
    # Focus order: the chips come after the answer's sections and before the message box.
    page.locator("#ga-input").focus()
    page.keyboard.press("Shift+Tab")
    sync_api.expect(chips.last).to_be_focused()
    spot = chips.filter(has_text=I18N["it"]["chip_spot"])
    spot.focus()
    before = page.locator(ANSWERS).count()
    with page.expect_request("**/api/chat/stream") as request_info:
        page.keyboard.press("Enter")
    result = wait_answer(page, before)
    body = request_info.value.post_data_json
    assert body == {
        "message": I18N["it"]["chip_spot_message"],
        "language": "it",
        "changes": {"interruptible_ok": True},
        "thread_id": first["thread_id"],
        "thread_token": first["thread_token"],
    }
    assert result["language"] == "it" and result["spec"]["interruptible_ok"] is True
    assert result["spec"]["model"] == first["spec"]["model"]
    sync_api.expect(page.locator(".bubble.user p").last).to_have_text(I18N["it"]["chip_spot_message"])
    sync_api.expect(page.locator(".chips")).to_have_count(1)  # only under the latest answer
    assert_verdict_in_view(page, page.locator(ANSWERS).last, result)
    best = result["offers"][0]
    sync_api.expect(page.locator(".status")).to_contain_text(f"{best['total_gpus']}× {best['gpu']}")  # announced

    faster = page.locator(ANSWERS).last.locator(".chip").filter(has_text=I18N["it"]["chip_faster"])
    before = page.locator(ANSWERS).count()
    with page.expect_request("**/api/chat/stream") as request_info:
        faster.click()
    quicker = wait_answer(page, before)
    assert request_info.value.post_data_json["prefer"] == "speed" and quicker["language"] == "it"
    assert quicker["offers"][0]["est_hours"] <= result["offers"][0]["est_hours"]
    sync_api.expect(page.locator(ANSWERS).last.locator(".verdict-gpus")).to_have_text(
        f"{quicker['offers'][0]['total_gpus']}× {quicker['offers'][0]['gpu']}"
    )
    shot(page, "widget-desktop-it-chip-faster")


def test_tick_labels_and_zone_duplicates_in_the_browser(page, server):
    page.goto(server.url + "/demo")
    page.get_by_role("button", name=I18N["it"]["open"]).click()
    sync_api.expect(page.locator("#ga-input")).to_be_visible()
    got = page.evaluate("""async () => {
        const charts = await import('/widget/parts/charts.js');
        const offers = await import('/widget/parts/offers.js');
        const i18n = await import('/widget/parts/i18n.js');
        i18n.setLang('it');
        const labels = (t) => charts.tickLabels(t);
        const a = {provider: 'aws', instance_type: 'p4d', total_gpus: 8, spot: false, price_per_hour: 32.7,
                   est_cost: 10, region: 'us-east-1', regions: ['us-east-1']};
        return {
            halves: labels([0, 2.5, 5, 7.5]), quarters: labels([3, 3.25, 3.5]), whole: labels([0, 5, 10]),
            ticks: charts.niceTicks(2.9, 3.6, 3), small: labels(charts.niceTicks(0.01, 0.05, 4)),
            merged: offers.collapseOffers([a, Object.assign({}, a, {region: 'us-west-2', regions: ['us-west-2']}),
                                          Object.assign({}, a, {spot: true})]).map(o => o.regions),
            // the advisor's order: headline, the on-demand plan beside a spot headline, then by cost; 12 offers
            order: offers.tableRows([48.78, 52.12, 45.53, 47.1, 60, 61, 62, 63, 64, 65, 66, 67].map(
                (c, i) => Object.assign({}, a, {est_cost: c, est_hours: 1, instance_type: 'i' + i}))).map(o => o.est_cost),
        };
    }""")
    assert got["halves"] == ["0,0", "2,5", "5,0", "7,5"]  # was "3" for 2.5
    assert got["quarters"] == ["3,00", "3,25", "3,50"]  # was "3,3" for 3.25
    assert got["whole"] == ["0", "5", "10"]
    assert got["ticks"] == [2.75, 3.0, 3.25, 3.5, 3.75]
    assert got["small"] == ["0,01", "0,02", "0,03", "0,04", "0,05"]
    assert got["merged"] == [["us-east-1", "us-west-2"], ["us-east-1"]]
    assert got["order"] == [48.78, 45.53, 47.1, 52.12, 60, 61, 62, 63, 64, 65]  # best first, then by cost; 10 rows


def test_phone_viewport_verdict_table_and_host_css_isolation(browser, server):
    problems: list[str] = []
    context, page = open_page(browser, 375, 740, problems, is_mobile=True, has_touch=True)
    try:
        page.goto(server.url + "/demo")
        launcher = page.get_by_role("button", name=I18N["it"]["open"])
        # The host page paints every <button> pink with !important; the Shadow DOM keeps the widget's own colours.
        assert (
            page.evaluate("() => getComputedStyle(document.querySelector('main button')).backgroundColor")
            == "rgb(255, 0, 170)"
        )
        # (retried: the widget's stylesheet loads into its shadow root after the page, later on a busy machine)
        sync_api.expect(launcher).to_have_css("background-color", "rgb(31, 95, 191)")
        launcher.tap()
        _, result = ask(page, ITALIAN_JOB)
        answer = page.locator(ANSWERS).last
        panel = page.locator("#ga-panel").bounding_box()
        assert panel["x"] >= 0 and panel["x"] + panel["width"] <= 375
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 375
        assert_verdict_in_view(page, answer, result)
        shot(page, "widget-phone-it-verdict")
        assert_table_fits(page, answer)
        assert_tick_labels_match_values(answer, "it")
        shot(page, "widget-phone-it-offers")
        answer.locator(".cost-figure").scroll_into_view_if_needed()
        shot(page, "widget-phone-it-chart")
        answer.locator("details.section.memory > summary").click()
        sync_api.expect(answer.locator("svg.memory")).to_be_visible()
        answer.locator("svg.memory").scroll_into_view_if_needed()
        shot(page, "widget-phone-it-memory")
        assert serious_axe_violations(page) == []
        page.get_by_role("button", name=I18N["it"]["close"]).tap()
        sync_api.expect(page.locator("#ga-panel")).to_be_hidden()
        sync_api.expect(launcher).to_be_visible()
    finally:
        context.close()
    assert problems == []


def test_script_and_onerror_in_messages_show_as_text(page, server):
    page.goto(server.url + "/demo")
    page.get_by_role("button", name=I18N["it"]["open"]).click()
    _, result = ask(page, XSS)
    sync_api.expect(page.locator(".bubble.user p")).to_have_text(XSS)
    assert page.evaluate("() => window.__xss") is None
    assert page.locator("#ga-panel img, #ga-panel script").count() == 0

    # Server text goes through the same renderer: put hostile text into a stored answer and reload.
    key = page.evaluate("() => Object.keys(localStorage).find(k => k.startsWith('gpu-advisor:'))")
    stored = stored_state(page)
    hostile = dict(
        result,
        answer='**Grassetto** <img src=x onerror="window.__xss = 3">\n- punto <b>uno</b> [1]',
        offers=[dict(o, provider="<script>window.__xss = 4</script>") for o in result["offers"]],
        citations=[
            {
                "id": "x",
                "title": "<img src=y onerror=alert(1)>",
                "text": "<i>t</i>",
                "article": "training",
                "language": "it",
            }
        ],
    )
    if result.get("verdict"):
        hostile["verdict"] = dict(result["verdict"], provider="<script>window.__xss = 5</script>")
    stored["turns"].append({"role": "assistant", "result": hostile})
    page.evaluate("([k, v]) => localStorage.setItem(k, v)", [key, json.dumps(stored)])
    page.reload()
    page.get_by_role("button", name=I18N["it"]["open"]).click()
    answer = page.locator(ANSWERS).last
    sync_api.expect(answer.locator(".md strong").first).to_have_text("Grassetto")
    sync_api.expect(answer.locator(".md p").first).to_contain_text('<img src=x onerror="window.__xss = 3">')
    sync_api.expect(answer.locator(".md li")).to_have_text(["punto <b>uno</b> [1]"])
    sync_api.expect(answer.locator(".verdict-where")).to_contain_text("<script>")
    sync_api.expect(answer.locator("table.offers tbody tr").first.locator("td.provider")).to_contain_text("<script>")
    sync_api.expect(answer.locator(".citations summary")).to_have_text(["[1] <img src=y onerror=alert(1)>"])
    assert page.locator("#ga-panel img, #ga-panel script, #ga-panel b, #ga-panel i").count() == 0
    assert page.evaluate("() => window.__xss") is None
    shot(page, "widget-xss-as-text")


@contextmanager
def host_site() -> Iterator[tuple[str, dict[str, bytes]]]:
    """A real HTTP server on 127.0.0.1 serving pages["/"]; yields (its origin spelled with 'localhost', pages).
    Another origin than the API's 127.0.0.1, in the same loopback address space (Chromium's local-network rules
    block a page from elsewhere reaching loopback)."""
    pages: dict[str, bytes] = {}

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            """Serve the host page."""
            body = pages.get(self.path, b"")
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{server.server_address[1]}", pages
    finally:
        server.shutdown()
        server.server_close()


def test_one_tag_embed_on_another_origin_loads_its_modules_and_chats(browser, tmp_path):
    """The embed on a site of another origin (allowed by GPU_ADVISOR_ALLOWED_ORIGINS): widget.js imports its modules
    from its own server (CORS), and the chat works from there."""
    catalog = ensure_db(tmp_path / "catalog.sqlite")
    with host_site() as (host, pages), serve(test_settings(tmp_path, catalog, allowed_origins=[host])) as api:
        pages["/"] = (
            f'<!doctype html><html lang="it"><head><link rel="icon" href="data:,"></head><body>'
            f'<p>Sito ospite</p><script src="{api.url}/widget/widget.js" data-api="{api.url}" '
            f'data-lang="it" defer></script></body></html>'
        ).encode()
        problems: list[str] = []
        context, page = open_page(browser, 1280, 900, problems)
        try:
            page.goto(host + "/")
            page.get_by_role("button", name=I18N["it"]["open"]).click()
            _, result = ask(page, "QLoRA su Llama 3 8B")
            assert result["language"] == "it"
            assert_verdict_in_view(page, page.locator(ANSWERS).last, result)
        finally:
            context.close()
        assert problems == []
