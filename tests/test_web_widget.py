"""The embeddable widget in a real browser (Debian's chromium via Playwright) against the real server and Advisor.

Screenshots go to artifacts/ (gitignored) for people to look at."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import httpx2
import pytest

from tests.web_server import parse_sse, serve, test_settings, without_thread
from tools.catalog import ensure_db

CHROMIUM = os.environ.get("GPU_ADVISOR_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run"]
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
ITALIAN_JOB = "QLoRA su Llama 3 8B, budget 50 euro, vanno bene le spot?"
FOLLOW_UP = "e con 2 GPU?"
ENGLISH_FOLLOW_UP = "and with 4 GPUs?"
XSS = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2"> QLoRA su Llama 3 8B'
I18N = json.loads((Path(__file__).resolve().parents[1] / "web" / "static" / "i18n.json").read_text("utf-8"))

if not Path(CHROMIUM).exists():
    if os.environ.get("CI"):
        raise RuntimeError(f"chromium not found at {CHROMIUM}; .ci/run installs it with apt-get")
    pytest.skip("chromium is not installed (apt-get install chromium)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")


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
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser):
    """A fresh page (own localStorage) that fails the test on any console error or page error."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="it-IT")
    opened = context.new_page()
    problems: list[str] = []
    opened.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    opened.on("pageerror", lambda error: problems.append(str(error)))
    yield opened
    context.close()
    assert problems == []


def shot(page, name: str, top=None) -> None:
    """Save a screenshot under artifacts/, with the `top` locator scrolled to the top of the chat log."""
    ARTIFACTS.mkdir(exist_ok=True)
    if top is not None:
        top.evaluate("node => node.scrollIntoView({block: 'start'})")
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def stored_state(page) -> dict:
    """The widget's saved state (thread id, turns with the results it received) from localStorage."""
    key = page.evaluate("() => Object.keys(localStorage).find(k => k.startsWith('gpu-advisor:'))")
    return json.loads(page.evaluate("k => localStorage.getItem(k)", key))


def ask(page, text: str) -> tuple[dict, dict]:
    """Type a message, press Enter, wait for the streamed answer; returns (request body, result received)."""
    answers = page.locator(".bubble.assistant:not(.greeting)")
    before = answers.count()
    with page.expect_request("**/api/chat/stream") as request_info:
        page.locator("#ga-input").fill(text)
        page.locator("#ga-input").press("Enter")
    sync_api.expect(answers).to_have_count(before + 1)
    sync_api.expect(page.locator(".log")).not_to_have_attribute("aria-busy", "true")
    turn = stored_state(page)["turns"][-1]
    assert turn["role"] == "assistant", turn
    assert answers.last.locator(".steps li").count() >= 3  # progress events were shown while it streamed
    return request_info.value.post_data_json, turn["result"]


def streamed_directly(server, message: str) -> list[tuple[str, dict]]:
    """The same request sent without the browser (a new thread), parsed."""
    with httpx2.stream("POST", server.url + "/api/chat/stream", json={"message": message}, timeout=60) as response:
        return parse_sse("".join(response.iter_text()))


def shadow_active_id(page) -> str | None:
    """The id of the element focused inside the widget's shadow root."""
    return page.evaluate("() => document.querySelector('#gpu-advisor-widget').shadowRoot.activeElement?.id ?? null")


def check_rendered(answer, result: dict, lang: str) -> None:
    """The answer bubble shows this result: table rows, memory bar, cost/time dots, citations, answer text."""
    strings = I18N[lang]
    rows = answer.locator("table.offers tbody tr")
    sync_api.expect(rows).to_have_count(min(8, len(result["offers"])))
    best = result["offers"][0]
    sync_api.expect(rows.first.locator("td").nth(1)).to_contain_text(best["instance_type"])
    sync_api.expect(rows.first.locator("td").nth(2)).to_have_text(f"{best['total_gpus']}× {best['gpu']}")
    sync_api.expect(answer.locator("table.offers th").nth(1)).to_have_text(strings["col_provider"])
    parts = [v for v in result["estimate"]["breakdown_gib"].values() if v > 0]
    sync_api.expect(answer.locator("svg.memory rect.seg")).to_have_count(len(parts))
    fit = result["estimate"]["fit"]
    sync_api.expect(answer.locator("svg.memory .vram-label")).to_contain_text(f"{fit['vram_gib']:.0f} GiB")
    verdict = strings["fits"] if fit["fits"] else strings["does_not_fit"]
    assert verdict in answer.locator("svg.memory").get_attribute("aria-label")
    fitting = [o for o in result["offers"] if o["fits"] is not False]
    sync_api.expect(answer.locator("svg.cost-time circle.dot")).to_have_count(len(fitting))
    sync_api.expect(answer.locator(".citations details")).to_have_count(len(result["citations"]))
    first_paragraph = result["answer"].split("\n")[0].replace("**", "").replace("`", "")
    sync_api.expect(answer.locator(".md p").first).to_contain_text(first_paragraph[:40])


def test_widget_conversation_in_italian_then_english_survives_reload(page, server):
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
    answer = page.locator(".bubble.assistant:not(.greeting)").last
    sync_api.expect(answer.locator(".steps li")).to_have_text([d["label"] for n, d in direct if n == "progress"])
    check_rendered(answer, first, "it")
    answer.locator(".citations summary").first.click()
    sync_api.expect(answer.locator(".citations details").first).to_have_attribute("open", "")
    shot(page, "widget-desktop-it", answer)

    request, second = ask(page, FOLLOW_UP)
    assert request == {"message": FOLLOW_UP, "thread_id": first["thread_id"]}
    assert second["thread_id"] == first["thread_id"] and second["spec"]["num_gpus"] == 2
    check_rendered(page.locator(".bubble.assistant:not(.greeting)").last, second, "it")

    page.locator("#ga-lang").select_option("en")
    sync_api.expect(page.get_by_role("dialog", name=I18N["en"]["title"])).to_be_visible()
    sync_api.expect(page.locator("#ga-input")).to_have_attribute("placeholder", I18N["en"]["placeholder"])
    sync_api.expect(page.locator("table.offers th").nth(1)).to_have_text(I18N["en"]["col_provider"])
    request, third = ask(page, ENGLISH_FOLLOW_UP)
    assert request["language"] == "en" and third["language"] == "en"
    assert third["spec"]["num_gpus"] == 4 and third["spec"]["model"] == first["spec"]["model"]
    check_rendered(page.locator(".bubble.assistant:not(.greeting)").last, third, "en")
    shot(page, "widget-desktop-en", page.locator(".bubble.assistant:not(.greeting)").last)

    page.keyboard.press("Escape")
    sync_api.expect(page.locator("#ga-panel")).to_be_hidden()
    assert page.evaluate("() => document.activeElement?.id") == "gpu-advisor-widget"  # focus back on the launcher
    assert shadow_active_id(page) is None or shadow_active_id(page) == ""

    page.reload()
    page.get_by_role("button", name=I18N["en"]["open"]).click()
    sync_api.expect(page.locator(".bubble.user p")).to_have_text([ITALIAN_JOB, FOLLOW_UP, ENGLISH_FOLLOW_UP])
    sync_api.expect(page.locator(".thread code")).to_have_text(first["thread_id"])
    sync_api.expect(page.locator("table.offers")).to_have_count(3)
    request, fourth = ask(page, FOLLOW_UP)
    assert request["thread_id"] == first["thread_id"] and fourth["spec"]["model"] == first["spec"]["model"]


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
    hostile = dict(result, answer="**Grassetto** <img src=x onerror=\"window.__xss = 3\">\n- punto <b>uno</b> [1]",
                   offers=[dict(o, provider="<script>window.__xss = 4</script>") for o in result["offers"]],
                   citations=[{"id": "x", "title": "<img src=y onerror=alert(1)>", "text": "<i>t</i>",
                               "article": "training", "language": "it"}])
    stored["turns"].append({"role": "assistant", "result": hostile})
    page.evaluate("([k, v]) => localStorage.setItem(k, v)", [key, json.dumps(stored)])
    page.reload()
    page.get_by_role("button", name=I18N["it"]["open"]).click()
    answer = page.locator(".bubble.assistant:not(.greeting)").last
    sync_api.expect(answer.locator(".md strong").first).to_have_text("Grassetto")
    sync_api.expect(answer.locator(".md p").first).to_contain_text('<img src=x onerror="window.__xss = 3">')
    sync_api.expect(answer.locator(".md li")).to_have_text(["punto <b>uno</b> [1]"])
    sync_api.expect(answer.locator("table.offers tbody tr").first.locator("td").nth(1)).to_contain_text("<script>")
    sync_api.expect(answer.locator(".citations summary")).to_have_text(["[1] <img src=y onerror=alert(1)>"])
    assert page.locator("#ga-panel img, #ga-panel script, #ga-panel b, #ga-panel i").count() == 0
    assert page.evaluate("() => window.__xss") is None
    shot(page, "widget-xss-as-text", page.locator(".bubble.user").last)


def test_phone_viewport_and_host_css_isolation(browser, server):
    context = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True)
    page = context.new_page()
    try:
        page.goto(server.url + "/demo")
        launcher = page.get_by_role("button", name=I18N["it"]["open"])
        # The host page paints every <button> pink with !important; the Shadow DOM keeps the widget's own colours.
        assert page.evaluate("() => getComputedStyle(document.querySelector('main button')).backgroundColor") \
            == "rgb(255, 0, 170)"
        assert launcher.evaluate("b => getComputedStyle(b).backgroundColor") == "rgb(31, 95, 191)"
        launcher.tap()
        ask(page, ITALIAN_JOB)
        panel = page.locator("#ga-panel").bounding_box()
        assert panel["x"] >= 0 and panel["x"] + panel["width"] <= 375
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 375
        table = page.locator(".bubble.assistant table.offers").last.bounding_box()
        assert table["width"] > 0
        sync_api.expect(page.locator("svg.memory").last).to_be_visible()
        shot(page, "widget-phone-it", page.locator(".bubble.assistant:not(.greeting)").last)
        shot(page, "widget-phone-table", page.locator(".bubble.assistant table.offers").last)
        page.get_by_role("button", name=I18N["it"]["close"]).tap()
        sync_api.expect(page.locator("#ga-panel")).to_be_hidden()
        sync_api.expect(launcher).to_be_visible()
    finally:
        context.close()
