"""/docs works with no network: Swagger UI's assets come from the installed swagger-ui-bundle package; /redoc is not
offered (no installed package ships ReDoc's JavaScript), rather than a blank page."""

from __future__ import annotations

import re

import httpx2
import pytest

from tests.shared_data import import_or_unavailable
from tests.web_server import ARTIFACTS, CHROMIUM_FLAGS, chromium_path, require_chromium, serve, test_settings
from tools.catalog.query import ensure_db


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    """The real app on 127.0.0.1."""
    catalog = ensure_db(tmp_path_factory.mktemp("catalog") / "catalog.sqlite")
    with serve(test_settings(tmp_path_factory.mktemp("threads"), catalog)) as running:
        yield running


def test_docs_page_names_no_outside_url_and_its_assets_are_served(server):
    page = httpx2.get(server.url + "/docs", timeout=30)
    assert page.status_code == 200
    urls = re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']|url:\s*'([^']+)'""", page.text)
    found = [u for pair in urls for u in pair if u]
    assert found and all(u.startswith("/") for u in found), found
    assert "cdn" not in page.text.lower() and "http" not in page.text.replace("http-equiv", "")
    for asset in ("/docs-assets/swagger-ui-bundle.js", "/docs-assets/swagger-ui.css"):
        response = httpx2.get(server.url + asset, timeout=30)
        assert response.status_code == 200 and len(response.content) > 10_000, asset
    assert httpx2.get(server.url + "/docs/oauth2-redirect", timeout=30).status_code == 200


def test_redoc_is_not_offered_as_a_blank_page(server):
    response = httpx2.get(server.url + "/redoc", timeout=30)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_swagger_ui_renders_in_a_browser_with_outside_requests_refused(server):
    require_chromium()
    sync_api = import_or_unavailable("playwright.sync_api")
    outside: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})

            def route(request_route):
                """Refuse (and record) anything not served by the test server."""
                if request_route.request.url.startswith(server.url):
                    request_route.continue_()
                else:
                    outside.append(request_route.request.url)
                    request_route.abort()

            page.route("**/*", route)
            page.goto(server.url + "/docs")
            sync_api.expect(page.locator(".swagger-ui .info .title")).to_contain_text("gpu-advisor")
            sync_api.expect(page.locator(".opblock-summary-path", has_text="/api/chat/stream")).to_have_count(1)
            sync_api.expect(page.locator(".opblock-summary-path", has_text="/api/compare")).to_have_count(1)
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "docs-offline.png"))
        finally:
            browser.close()
    assert outside == []
