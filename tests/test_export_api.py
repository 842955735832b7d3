"""POST /api/export/skypilot over a real server, and the widget's "Launch with SkyPilot" download in Chromium."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest
import yaml

from agent.export.skypilot import build_task
from tests.shared_data import import_or_unavailable
from tests.web_server import (
    CHROMIUM_FLAGS,
    chromium_path,
    require_chromium,
    serve,
    test_settings,
)
from tools.catalog.query import ensure_db

JOB = "LoRA su Llama 3 8B, 10k esempi, su aws, vanno bene le spot"


def export_body(result: dict) -> dict:
    """What the widget sends: the chat result's language, spec, estimate, first offer and catalog."""
    return {
        "language": result["language"],
        "spec": result["spec"],
        "estimate": result["estimate"],
        "offers": result["offers"][:1],
        "catalog": result["catalog"],
    }


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    """The real app and Advisor on 127.0.0.1."""
    catalog = ensure_db(tmp_path_factory.mktemp("catalog") / "catalog.sqlite")
    with serve(test_settings(tmp_path_factory.mktemp("threads"), catalog)) as running:
        yield running


@pytest.fixture(scope="module")
def chat_result(server) -> dict:
    """A real /api/chat result with a recommendation."""
    response = httpx2.post(server.url + "/api/chat", json={"message": JOB}, timeout=120)
    assert response.status_code == 200
    result = response.json()
    assert result["offers"] and result["offers"][0]["provider"] == "aws"
    return result


def test_the_chat_result_exports_as_the_same_task_the_cli_builds(server, chat_result):
    """The endpoint returns the commented task for the first offer: the CLI's task, in the user's language."""
    response = httpx2.post(server.url + "/api/export/skypilot", json=export_body(chat_result), timeout=60)
    assert response.status_code == 200, response.text
    body = response.json()
    expected = build_task(chat_result, db_path=server.app.state.resources.catalog_path)
    assert body["yaml"] == expected.yaml and body["filename"] == "task.yaml"
    task = yaml.safe_load(body["yaml"])
    offer = chat_result["offers"][0]
    assert task["resources"]["instance_type"] == offer["instance_type"]
    assert task["resources"]["use_spot"] is offer["spot"]
    assert "# L'offerta consigliata" in body["yaml"]
    assert body["launch_command"].startswith("sky jobs launch" if offer["spot"] else "sky launch")
    assert "DATASET" in body["required_env"]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"offers": []}, "offers"),
        (
            {"offers": [{"provider": "simplepod", "instance_type": "gpu_1x_rtx3090"}], "spec": {}},
            "SkyPilot cannot launch on simplepod and no offer",
        ),
        ({"offers": [{"provider": "aws"}]}, "missing or malformed"),
        ({"offers": [{"provider": "aws", "instance_type": "g5.xlarge", "gpu_count": "many"}]}, "missing or malformed"),
        ({"language": "fr"}, "language"),
    ],
)
def test_bad_results_get_a_one_line_422(server, chat_result, change, words):
    """Nothing to export, a provider SkyPilot lacks, or a malformed offer: 422 with a clear message, never a 500."""
    response = httpx2.post(server.url + "/api/export/skypilot", json={**export_body(chat_result), **change}, timeout=60)
    assert response.status_code == 422, response.text
    message = response.json()["error"]["message"]
    assert words in message and "\n" not in message


def test_an_offer_skypilot_cannot_launch_comes_back_as_its_best_launchable_alternative(server):
    """What the widget sends, with a first offer on simplepod: the task is the job's best offer on a cloud SkyPilot
    launches, and `note` says which and why in the turn's language (200, not 422)."""
    result = httpx2.post(
        server.url + "/api/chat", json={"message": "LoRA su Llama 3 8B, 10k esempi, su simplepod"}, timeout=120
    ).json()
    assert result["offers"][0]["provider"] == "simplepod"
    response = httpx2.post(server.url + "/api/export/skypilot", json=export_body(result), timeout=60)
    assert response.status_code == 200, response.text
    body = response.json()
    expected = build_task(result, db_path=server.app.state.resources.catalog_path)
    assert body["yaml"] == expected.yaml and body["note"] == expected.note
    assert body["offer"]["provider"] != "simplepod" and body["offer"]["provider"] == expected.offer["provider"]
    assert yaml.safe_load(body["yaml"])["resources"]["instance_type"] == body["offer"]["instance_type"]
    assert "non si può avviare con SkyPilot" in body["note"] and body["offer"]["provider"] in body["note"]


def test_widget_button_downloads_the_task(server):
    """In the widget, 'Avvia con SkyPilot' downloads task.yaml with the recommended instance."""
    require_chromium()
    sync_api = import_or_unavailable("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        try:
            context = browser.new_context(
                viewport={"width": 1280, "height": 900}, locale="it-IT", accept_downloads=True
            )
            page = context.new_page()
            page.goto(server.url + "/demo")
            page.get_by_role("button", name="Apri il consulente GPU").click()
            page.locator("#ga-input").fill(JOB)
            with page.expect_response("**/api/chat/stream"):
                page.locator("#ga-input").press("Enter")
            button = page.get_by_role("button", name="Avvia con SkyPilot (task.yaml)")
            button.wait_for(timeout=60_000)
            with page.expect_download() as download_info:
                button.click()
            download = download_info.value
            assert download.suggested_filename == "task.yaml"
            task = yaml.safe_load(Path(download.path()).read_text(encoding="utf-8"))
            assert task["resources"]["infra"].startswith("aws")
            sync_api.expect(page.locator(".export-status")).to_contain_text("sky ")

            # A recommendation on a cloud SkyPilot cannot launch: the download is the alternative, and says so.
            page.locator("#ga-input").fill("LoRA su Llama 3 8B, 10k esempi, su simplepod")
            with page.expect_response("**/api/chat/stream"):
                page.locator("#ga-input").press("Enter")
            button = page.locator(".bubble.assistant").last.get_by_role("button", name="Avvia con SkyPilot (task.yaml)")
            button.wait_for(timeout=60_000)
            with page.expect_download() as download_info:
                button.click()
            task = yaml.safe_load(Path(download_info.value.path()).read_text(encoding="utf-8"))
            assert not task["resources"]["infra"].startswith("simplepod")
            status = page.locator(".bubble.assistant").last.locator(".export-status")
            sync_api.expect(status).to_contain_text("non si può avviare con SkyPilot")
            sync_api.expect(status).to_contain_text(task["resources"]["infra"].split("/")[0])
        finally:
            browser.close()


def test_an_offer_without_a_provider_is_refused_saying_so() -> None:
    """A result whose offer names no provider is one clear line, not 'SkyPilot cannot launch on None'."""
    import pytest

    from agent.export import ExportError, build_task

    with pytest.raises(ExportError, match="names no provider"):
        build_task({"language": "en", "spec": {}, "offers": [{}]})
