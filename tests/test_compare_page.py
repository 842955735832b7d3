"""The comparison page (/compare) and its JSON (/api/compare) on the real catalog (5k+ offers): server-side sort,
filters and pages; a job (typed, handed over from the chat, or given to the one-tag embed) adds fit, per-GPU memory,
hours and job cost. Browser parts run in Debian's chromium; screenshots go to artifacts/compare-*.png."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import httpx2
import pytest

from tests.shared_data import unavailable
from tests.web_server import (
    ARTIFACTS,
    CHROMIUM_FLAGS,
    chromium_path,
    require_chromium,
    serious_axe_violations,
    serve,
    test_settings,
)
from tools.catalog.query import ensure_db

JOB = "QLoRA su Llama 3 8B, budget 50 euro"
I18N = json.loads((Path(__file__).resolve().parents[1] / "web" / "static" / "i18n.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    """The real app on 127.0.0.1 with the shipped catalog."""
    catalog = ensure_db(tmp_path_factory.mktemp("catalog") / "catalog.sqlite")
    with serve(test_settings(tmp_path_factory.mktemp("threads"), catalog)) as running:
        yield running


def get(server, **params) -> httpx2.Response:
    """GET /api/compare with these query parameters."""
    return httpx2.get(server.url + "/api/compare", params=params, timeout=60)


def keyed(rows: list[dict], key: str) -> list:
    """The sort values of rows (None for a missing value)."""
    return [r[key] for r in rows]


def _keys(node: dict, prefix: str = "") -> set[str]:
    """Every dotted key of a nested strings table."""
    out: set[str] = set()
    for key, value in node.items():
        out |= _keys(value, f"{prefix}{key}.") if isinstance(value, dict) else {prefix + key}
    return out


def test_interface_strings_exist_in_every_language():
    tables = {lang: _keys(I18N[lang]) for lang in ("it", "id", "en")}
    assert tables["it"] == tables["id"] == tables["en"]
    for lang in ("it", "id", "en"):
        for key, value in I18N[lang]["compare"].items():
            assert isinstance(value, str) and value.strip(), (lang, key)


def test_every_offer_once_zone_duplicates_merged(server):
    first = get(server, page_size=200).json()
    assert first["offers"] >= 5000 and first["total"] < first["offers"]  # zones of one offer are one row
    rows = list(first["rows"])
    for page in range(2, first["pages"] + 1):
        rows += get(server, page_size=200, page=page).json()["rows"]
    assert len(rows) == first["total"]
    keys = [
        (r["provider"], r["instance_type"], r["region"], r["price_per_hour"], r["spot_price_per_hour"]) for r in rows
    ]
    assert len(set(keys)) == len(keys)
    assert sum(max(1, len(r["zones"])) for r in rows) >= first["offers"] - sum(1 for r in rows if not r["zones"])
    assert all(r["snapshot_date"] == first["snapshot_date"] for r in rows)
    assert {r["interconnect"] for r in rows} == set(first["facets"]["interconnects"]) >= {"nvlink", "pcie", "none"}
    assert all(r["billing_s"] > 0 for r in rows)


def test_sort_both_ways_across_pages_missing_values_last(server):
    for sort, key in (("price", "price_per_hour"), ("spot_price", "spot_price_per_hour"), ("vram", "vram_gib_per_gpu")):
        for order in ("asc", "desc"):
            one = get(server, sort=sort, order=order, page_size=100).json()
            two = get(server, sort=sort, order=order, page_size=100, page=2).json()
            values = [v for v in keyed(one["rows"] + two["rows"], key) if v is not None]
            assert values == sorted(values, reverse=order == "desc"), (sort, order)
    last = get(server, sort="spot_price", page=get(server, sort="spot_price").json()["pages"]).json()
    assert last["rows"][-1]["spot_price_per_hour"] is None  # offers without spot come after every price
    by_gpu = get(server, sort="gpu", order="desc", page_size=50).json()["rows"]
    assert [r["gpu"].lower() for r in by_gpu] == sorted((r["gpu"].lower() for r in by_gpu), reverse=True)


def test_filters_combine(server):
    result = get(server, gpu="H100", spot="true", min_vram=40, page_size=200).json()
    assert result["total"] > 0
    assert all(
        r["gpu"] == "H100" and r["spot_price_per_hour"] is not None and r["vram_gib_per_gpu"] >= 40
        for r in result["rows"]
    )
    aws = get(server, provider="aws", region="us-east", gpu_count=8, page_size=200).json()
    assert aws["total"] > 0 and all(
        r["provider"] == "aws" and r["gpu_count"] == 8 and any("us-east" in p for p in r["regions"] + r["zones"])
        for r in aws["rows"]
    )
    words = get(server, q="a100 nvlink", page_size=200).json()  # words over GPU, provider, instance, region
    assert words["total"] == 0 or all("a100" in (r["gpu"] + r["instance_type"]).lower() for r in words["rows"])
    nvlink = get(server, interconnect="nvlink", max_price=5, page_size=200).json()
    assert all(r["interconnect"] == "nvlink" and r["price_per_hour"] <= 5 for r in nvlink["rows"])
    assert get(server, gpu="no-such-gpu").json()["total"] == 0


def test_bad_parameters_are_one_line_422s(server):
    for params in (
        {"page_size": 500},
        {"sort": "bogus"},
        {"page": 0},
        {"job": "ciao"},
        {"job": '{"model": 5}'},
        {"job": "{not json"},
    ):
        response = get(server, **params)
        assert response.status_code == 422, params
        error = response.json()["error"]
        assert error["code"] == "invalid_input" and "\n" not in error["message"] and len(error["message"]) < 300


def test_a_job_adds_its_columns_sorted_by_job_cost(server):
    result = get(server, job=JOB, page_size=100).json()
    job = result["job"]
    assert job["language"] == "it" and job["model_id"] == "llama-3-8b" and job["method"] == "qlora"
    assert job["budget_usd"] > 50  # 50 EUR in USD
    assert result["sort"] == "job_cost" and result["total"] == job["runs_on"] > 100
    costs = [r["job"]["est_cost"] for r in result["rows"]]
    assert costs == sorted(costs)
    for row in result["rows"]:
        figures = row["job"]
        assert figures["fits"] is True and figures["per_gpu_gib"] <= row["vram_gib_per_gpu"]
        assert figures["est_hours"] > 0 and figures["meets_budget"] == (figures["est_cost"] <= job["budget_usd"])
    everything = get(
        server,
        job=JOB,
        fits_only="false",
        page_size=200,
        page=get(server, job=JOB, fits_only="false").json()["pages"] // 4 + 1,
    ).json()
    assert everything["total"] == get(server).json()["total"]
    # The same job as a JobSpec (what the chat hands over) gives the same figures.
    spec = {"model": "llama-3-8b", "method": "qlora", "budget": {"amount": 50, "currency": "EUR"}}
    as_spec = get(server, job=json.dumps(spec), lang="it", page_size=100).json()
    assert [r["job"]["est_cost"] for r in as_spec["rows"]] == costs
    by_hours = get(server, job=JOB, sort="hours", page_size=100).json()["rows"]
    assert [r["job"]["est_hours"] for r in by_hours] == sorted(r["job"]["est_hours"] for r in by_hours)


# ------------------------------------------------------------------------------------------------ in the browser

try:
    from playwright import sync_api
except ImportError:  # the API tests above still run
    sync_api = None


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium, headless, no background networking (the browser tests are skipped, with the reason,
    when chromium or playwright is missing)."""
    require_chromium()
    if sync_api is None:
        unavailable("playwright is not installed")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser):
    """A 1280 px Italian page that fails the test on any console or page error."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="it-IT")
    opened = context.new_page()
    problems: list[str] = []
    opened.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    opened.on("pageerror", lambda error: problems.append(str(error)))
    yield opened
    context.close()
    assert problems == []


def shot(page, name: str) -> None:
    """Save a screenshot under artifacts/."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def column(page, name: str) -> list[str]:
    """The texts of one column (by its data-col) on the current page of the table."""
    index = page.locator("#c-table thead th").evaluate_all(
        "(ths, name) => ths.findIndex(th => th.dataset.col === name)", name
    )
    return page.locator(f"#c-table tbody tr > :nth-child({index + 1})").all_inner_texts()


def number(text: str) -> float | None:
    """A number as the Italian page writes it ('1.234,50'), None for '–'."""
    text = text.split("\n")[0].strip()
    return None if text in ("–", "") else float(text.replace(".", "").replace(",", "."))


def test_sort_and_filter_the_full_catalog_in_the_browser(page, server):
    page.goto(server.url + "/compare")
    rows = page.locator("#c-table tbody tr")
    sync_api.expect(rows).to_have_count(50)
    strings = I18N["it"]["compare"]
    sync_api.expect(page.locator("h1")).to_have_text(strings["title"])
    sync_api.expect(page.locator("th[data-col=price]")).to_have_attribute("aria-sort", "ascending")
    assert [t.rstrip(" ▲▼") for t in page.locator("#c-table thead th").all_inner_texts()] == [
        strings[k]
        for k in (
            "col_gpu",
            "col_provider",
            "col_price",
            "col_spot",
            "col_region",
            "col_count",
            "col_vram",
            "col_interconnect",
            "col_billing",
        )
    ]
    total = get(server).json()["total"]
    sync_api.expect(page.locator("#c-count")).to_contain_text(re.compile(rf"^{total // 1000}\.?{total % 1000:03d} "))
    prices = [number(t) for t in column(page, "price")]
    assert [p for p in prices if p is not None] == sorted(p for p in prices if p is not None)

    page.locator("th[data-col=price] button").click()  # already by price ascending: now descending
    sync_api.expect(page.locator("th[data-col=price]")).to_have_attribute("aria-sort", "descending")
    sync_api.expect(page.locator("th[data-col=price] button")).to_be_focused()
    top = get(server, sort="price", order="desc", page_size=50).json()["rows"][0]
    sync_api.expect(rows.first.locator("td[data-col=price]")).to_have_text(
        f"{top['price_per_hour']:,.2f}".replace(",", "X").replace(".", ",").replace("X", ".")
    )
    page.locator("th[data-col=vram] button").click()
    sync_api.expect(page.locator("th[data-col=vram]")).to_have_attribute("aria-sort", "ascending")
    vram = [number(t) for t in column(page, "vram")]
    assert vram == sorted(vram)

    page.locator("#f-gpu").select_option("H100")
    page.locator("#f-spot").check()
    expected = get(server, gpu="H100", spot="true", sort="vram").json()
    sync_api.expect(page.locator("#c-count")).to_contain_text(str(expected["total"]))
    assert {t.split("\n")[0] for t in column(page, "gpu")} == {"H100"}
    assert all(number(t) is not None for t in column(page, "spot_price"))
    assert "gpu=H100" in page.url and "spot=true" in page.url  # the view can be shared as a link
    page.locator("#f-region").fill("us-")
    sync_api.expect(page.locator("#c-count")).to_contain_text(
        str(get(server, gpu="H100", spot="true", region="us-").json()["total"])
    )
    assert serious_axe_violations(page) == []
    shot(page, "compare-desktop-filtered")

    page.locator("#f-gpu").select_option("")
    page.locator("#f-spot").uncheck()
    page.locator("#f-region").fill("")
    sync_api.expect(page.locator("#c-count")).to_contain_text(re.compile(rf"^{total // 1000}\.?{total % 1000:03d} "))
    pages = get(server, sort="vram").json()["pages"]
    sync_api.expect(page.locator("#c-page")).to_have_text(strings["page"].format(page=1, pages=pages))
    page.locator("#c-next").click()
    sync_api.expect(page.locator("#c-page")).to_have_text(strings["page"].format(page=2, pages=pages))
    second = get(server, sort="vram", page=2, page_size=50).json()["rows"]
    sync_api.expect(rows.first.locator("td[data-col=provider]")).to_contain_text(second[0]["provider"])
    assert "page=2" in page.url


def test_job_typed_in_the_box_adds_job_columns_and_phone_layout(browser, server):
    context = browser.new_context(viewport={"width": 375, "height": 740}, locale="en-US", is_mobile=True)
    page = context.new_page()
    try:
        page.goto(server.url + "/compare")
        sync_api.expect(page.locator("h1")).to_have_text(I18N["en"]["compare"]["title"])
        page.locator("#c-job-text").fill(JOB)  # Italian words: the page follows the job's language
        page.locator("#c-job-text").press("Enter")
        sync_api.expect(page.locator("th[data-col=job_cost]")).to_have_attribute("aria-sort", "ascending")
        sync_api.expect(page.locator("h1")).to_have_text(I18N["it"]["compare"]["title"])
        sync_api.expect(page.locator("#c-job-summary")).to_contain_text("llama-3-8b")
        costs = [number(t) for t in column(page, "job_cost")]
        assert costs == sorted(costs) and len(costs) == 50
        assert set(column(page, "fits")) == {I18N["it"]["compare"]["yes"]}
        first = get(server, job=JOB, page_size=1).json()["rows"][0]
        assert number(column(page, "per_gpu")[0]) == pytest.approx(first["job"]["per_gpu_gib"], abs=0.05)
        filters = page.locator("#c-filters-box")  # folded on a phone, one tap away
        sync_api.expect(filters).not_to_have_attribute("open", "")
        filters.locator("summary").click()
        sync_api.expect(page.locator("#f-gpu")).to_be_visible()
        filters.locator("summary").click()
        # Phone: the table scrolls sideways inside its own box, the page does not; the GPU column stays in view.
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 375
        wrap = page.locator(".table-wrap")
        wrap.evaluate("n => { n.scrollLeft = 400; }")
        gpu_cell = page.locator("#c-table tbody tr").first.locator("th").bounding_box()
        box = wrap.bounding_box()
        assert box["x"] - 0.5 <= gpu_cell["x"] and gpu_cell["x"] + gpu_cell["width"] <= box["x"] + box["width"]
        assert serious_axe_violations(page) == []
        shot(page, "compare-phone-job")
    finally:
        context.close()


def test_chat_answer_links_to_the_comparison_with_the_job_filled_in(page, server):
    page.goto(server.url + "/demo")
    page.get_by_role("button", name=I18N["it"]["open"]).click()
    page.locator("#ga-input").fill(JOB)
    page.locator("#ga-input").press("Enter")
    link = page.locator(".bubble.assistant:not(.greeting) .compare-link").last
    sync_api.expect(link).to_have_text(I18N["it"]["compare_link"])
    href = link.get_attribute("href")
    query = parse_qs(urlparse(href).query)
    assert json.loads(query["job"][0])["model"] == "llama-3-8b" and query["lang"] == ["it"]
    page.goto(href)
    sync_api.expect(page.locator("th[data-col=job_cost]")).to_have_attribute("aria-sort", "ascending")
    sync_api.expect(page.locator("#c-job-summary")).to_contain_text("llama-3-8b")
    sync_api.expect(page.locator("h1")).to_have_text(I18N["it"]["compare"]["title"])
    shot(page, "compare-desktop-job-from-chat")


def test_one_tag_embed_on_another_page(page, server):
    embed = (
        f'<!doctype html><html lang="id"><body><h1>Host</h1>'
        f'<script src="{server.url}/widget/compare-embed.js" data-api="{server.url}" data-lang="id" '
        f'data-job="QLoRA Llama 3 8B" data-height="600"></script></body></html>'
    )
    page.route(server.url + "/host.html", lambda route: route.fulfill(status=200, body=embed, content_type="text/html"))
    page.goto(server.url + "/host.html")
    frame = page.frame_locator("iframe.gpu-advisor-compare")
    sync_api.expect(frame.locator("h1")).to_have_text(I18N["id"]["compare"]["title"])
    sync_api.expect(frame.locator("th[data-col=job_cost]")).to_have_attribute("aria-sort", "ascending")
    sync_api.expect(frame.locator("#c-table tbody tr")).to_have_count(50)
    assert page.locator("iframe.gpu-advisor-compare").bounding_box()["height"] == 600


# ------------------------------------------------------------------------- a page people bookmark (issue 28)

RAW_FX = json.loads((Path(__file__).resolve().parents[1] / "tools" / "data" / "fx_rates.json").read_text("utf-8"))


def eur_in_usd() -> float:
    """USD per EUR from the shipped rate table, read raw."""
    rates = {RAW_FX["base"]: 1.0, **RAW_FX["rates"]}
    return rates["USD"] / rates["EUR"]


def it2(value: float) -> str:
    """A number as the Italian page writes it with 2 decimals (Intl rounds the shortest decimal half away)."""
    from decimal import ROUND_HALF_UP, Decimal

    return str(Decimal(repr(value)).quantize(Decimal("0.01"), ROUND_HALF_UP)).replace(".", ",")


def every_api_row(server, **params) -> list[dict]:
    """Every row of a view, page after page, over HTTP."""
    first = get(server, page_size=200, **params).json()
    rows = list(first["rows"])
    for page in range(2, first["pages"] + 1):
        rows += get(server, page_size=200, page=page, **params).json()["rows"]
    return rows


def test_one_instance_at_one_price_is_one_row_with_its_regions(server):
    """Rows group the regions (and zones) of one instance at one price pair, as the raw catalog lists them."""
    import sqlite3

    rows = every_api_row(server)
    grouped = [r for r in rows if len(r["regions"]) > 1]
    assert grouped, "the shipped catalog has instances offered in several regions at one price"
    with sqlite3.connect(server.app.state.resources.catalog_path) as raw:
        for row in grouped[:40]:
            regions = {
                r
                for (r,) in raw.execute(
                    "SELECT DISTINCT region FROM offers WHERE provider = ? AND instance_type = ? AND price_per_hour IS ? "
                    "AND spot_price_per_hour IS ? AND vram_gib_per_gpu IS ?",
                    (
                        row["provider"],
                        row["instance_type"],
                        row["price_per_hour"],
                        row["spot_price_per_hour"],
                        row["vram_gib_per_gpu"],
                    ),
                )
            }
            assert set(row["regions"]) == regions, row
    runpod = [r for r in rows if r["provider"] == "runpod" and r["gpu"] == "L40S"]
    keys = [(r["instance_type"], r["price_per_hour"], r["spot_price_per_hour"]) for r in runpod]
    assert len(keys) == len(set(keys))  # no two identical runpod L40S rows any more


def test_budget_in_the_users_currency_with_the_usd_figure(server):
    result = get(server, job=JOB, page_size=20).json()
    budget = result["job"]["budget"]
    assert (budget["amount"], budget["currency"]) == (50, "EUR")
    assert budget["usd"] == pytest.approx(50 * eur_in_usd())
    for row in result["rows"]:
        assert row["job"]["est_cost_budget_currency"] == pytest.approx(row["job"]["est_cost"] / eur_in_usd())


def test_chart_points_are_the_cheapest_per_duration_with_the_pareto_front(server):
    """Recomputed from every row the job runs on: the cheapest cost at each duration, and the front (no row both
    cheaper and faster)."""
    chart = get(server, job=JOB, page_size=1).json()["job"]["chart"]
    cheapest: dict[float, float] = {}
    for row in every_api_row(server, job=JOB):
        hours, cost = row["job"]["est_hours"], row["job"]["est_cost"]
        cheapest[hours] = min(cost, cheapest.get(hours, cost))
    assert [(p["hours"], p["cost"]) for p in chart] == sorted(cheapest.items())
    front = {
        h
        for h, c in cheapest.items()
        if not any(h2 <= h and c2 <= c and (h2, c2) != (h, c) for h2, c2 in cheapest.items())
    }
    assert {p["hours"] for p in chart if p["pareto"]} == front
    filtered = get(server, job=JOB, gpu="H100", page_size=1).json()["job"]["chart"]
    assert filtered and all(p["gpu"] == "H100" for p in filtered)


def _in_view(page, cols: list[str]) -> dict[str, bool]:
    """Whether each column's header lies inside the visible part of the table box (no scrolling)."""
    return page.evaluate(
        """cols => {
        const wrap = document.querySelector('.table-wrap').getBoundingClientRect();
        const out = {};
        cols.forEach(c => { const th = document.querySelector('#c-table thead th[data-col=' + c + ']');
          const r = th ? th.getBoundingClientRect() : null;
          out[c] = Boolean(r && r.width > 0 && r.left >= wrap.left - 0.5 && r.right <= wrap.right + 0.5
                           && r.right <= window.innerWidth + 0.5); });
        return out; }""",
        cols,
    )


@pytest.mark.parametrize("width,height", [(1280, 800), (375, 812)])
def test_columns_that_matter_in_view_grouped_regions_and_chart(browser, server, width, height):
    context = browser.new_context(viewport={"width": width, "height": height}, locale="it-IT", is_mobile=width < 600)
    page = context.new_page()
    try:
        page.goto(server.url + "/compare?" + urlencode({"job": JOB}))
        sync_api.expect(page.locator("th[data-col=job_cost]")).to_have_attribute("aria-sort", "ascending")
        matter = ["gpu", "job_cost", "hours", "provider", "price"]
        if width >= 1280:
            matter += ["fits", "per_gpu", "spot_price", "region", "count", "vram", "interconnect", "billing"]
        assert _in_view(page, matter) == {c: True for c in matter}
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width
        # The budget in the user's currency with the USD figure beside it.
        usd = 50 * eur_in_usd()
        sync_api.expect(page.locator("#c-job-summary")).to_contain_text("50,00 EUR")
        sync_api.expect(page.locator("#c-job-summary")).to_contain_text(it2(usd) + " USD")
        first = get(server, job=JOB, page_size=1).json()["rows"][0]["job"]
        eur = it2(first["est_cost"] / eur_in_usd())
        sync_api.expect(page.locator("#c-table tbody tr").first.locator("td[data-col=job_cost] small.fx")).to_have_text(
            f"≈ {eur} EUR"
        )
        # The chart: one dot per point, the front marked, the budget line drawn.
        chart = get(server, job=JOB, page_size=1).json()["job"]["chart"]
        sync_api.expect(page.locator("#c-chart svg circle")).to_have_count(len(chart))
        assert page.locator("#c-chart svg circle.pareto").count() == sum(p["pareto"] for p in chart)
        assert page.locator("#c-chart svg line.budget").count() == 1
        assert page.locator("#c-chart").bounding_box()["width"] <= width
        shot(page, f"compare-{width}-job-table")
        page.locator("#c-chart").scroll_into_view_if_needed()
        shot(page, f"compare-{width}-chart")
        # Grouped regions: a row with several regions says how many and opens the list.
        page.goto(server.url + "/compare?" + urlencode({"provider": "runpod", "gpu": "L40S"}))
        grouped = page.locator("td.grouped").first
        sync_api.expect(grouped).to_be_visible()
        rows = get(server, provider="runpod", gpu="L40S", page_size=200).json()["rows"]
        many = next(r for r in rows if len(r["regions"]) > 1)
        sync_api.expect(grouped.locator("summary small")).to_have_text(
            I18N["it"]["compare"]["regions"].format(n=len(many["regions"]))
        )
        grouped.locator("summary").click()
        sync_api.expect(grouped.locator("ul.regions li")).to_have_count(len(many["regions"]))
        assert _in_view(page, ["gpu", "provider", "price"]) == {"gpu": True, "provider": True, "price": True}
        assert serious_axe_violations(page) == []
        shot(page, f"compare-{width}-grouped-regions")
    finally:
        context.close()


def test_filters_survive_reload_and_a_bookmark_and_csv_is_what_is_shown(browser, page, server):
    page.goto(server.url + "/compare?" + urlencode({"job": JOB}))
    sync_api.expect(page.locator("th[data-col=job_cost]")).to_have_attribute("aria-sort", "ascending")
    page.locator("#f-gpu").select_option("H100")
    page.locator("#f-max_price").fill("30")
    page.locator("th[data-col=hours] button").click()
    expected = get(server, job=JOB, gpu="H100", max_price=30, sort="hours", order="asc").json()
    sync_api.expect(page.locator("#c-count")).to_contain_text(str(expected["total"]))
    sync_api.expect(page.locator("th[data-col=hours]")).to_have_attribute("aria-sort", "ascending")
    query = parse_qs(urlparse(page.url).query)
    assert query["gpu"] == ["H100"] and query["max_price"] == ["30"] and query["sort"] == ["hours"]
    shown = column(page, "provider")
    for opened in (page, browser.new_page()):  # the same tab reloaded, and the URL opened as a bookmark
        if opened is page:
            opened.reload()
        else:
            opened.goto(page.url)
        sync_api.expect(opened.locator("th[data-col=hours]")).to_have_attribute("aria-sort", "ascending")
        sync_api.expect(opened.locator("#f-gpu")).to_have_value("H100")
        sync_api.expect(opened.locator("#f-max_price")).to_have_value("30")
        sync_api.expect(opened.locator("#c-job-text")).to_have_value(JOB)
        sync_api.expect(opened.locator("#c-count")).to_contain_text(str(expected["total"]))
        assert column(opened, "provider") == shown
        if opened is not page:
            opened.close()

    with page.expect_download() as info:
        page.locator("#c-csv").click()
    download = info.value
    assert download.suggested_filename.endswith(".csv")
    import csv
    import io

    table = list(csv.reader(io.StringIO(Path(download.path()).read_text("utf-8"))))
    header, body = table[0], table[1:]
    assert len(body) == page.locator("#c-table tbody tr").count() == len(expected["rows"])
    strings = I18N["it"]["compare"]
    cost = header.index(strings["col_job_cost"])
    hours = header.index(strings["col_hours"])
    assert header[cost + 1] == strings["csv_cost_currency"].format(currency="EUR")
    for line, row in zip(body, expected["rows"]):
        assert float(line[cost]) == pytest.approx(row["job"]["est_cost"], rel=1e-9)
        assert float(line[cost + 1]) == pytest.approx(row["job"]["est_cost"] / eur_in_usd(), rel=1e-9)
        assert float(line[hours]) == pytest.approx(row["job"]["est_hours"], rel=1e-9)
        assert line[header.index(strings["col_provider"])] == row["provider"]
    shot(page, "compare-1280-filters-restored")
