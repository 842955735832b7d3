"""HTTP API against a real uvicorn on 127.0.0.1 running the real offline Advisor: chat, SSE, tools, limits, CORS."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest

from agent.faq_answer import answer_question
from agent.service import Advisor
from contract.jobspec import JobSpec
from tests.raw_catalog import assert_headline_rule, raw_cost
from tests.slack_fakes import BOT_TOKEN, SIGNING_SECRET
from tests.web_server import parse_sse, serve, test_settings, without_thread
from tools.catalog.query import ensure_db
from tools.memory.estimator import EstimateRequest, estimate
from tools.ranking.rank import rank_offers
from tools.spot.risk import SpotRiskRequest, assess_spot

ITALIAN_JOB = "QLoRA su Llama 3 8B, budget 50 euro, vanno bene le spot?"
FOLLOW_UP = "facciamo 2 GPU"


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The offers database built once from the shipped snapshot."""
    return ensure_db(tmp_path_factory.mktemp("catalog") / "catalog.sqlite")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, catalog: Path):
    """One server for the tests that do not change settings."""
    with serve(
        test_settings(tmp_path_factory.mktemp("threads"), catalog, allowed_origins=["https://docs.example.com"])
    ) as running:
        yield running


@pytest.fixture(scope="module")
def client(server) -> httpx2.Client:
    """A client on that server."""
    with httpx2.Client(base_url=server.url, timeout=60) as http:
        yield http


@pytest.fixture(scope="module")
def direct(tmp_path_factory: pytest.TempPathFactory, catalog: Path) -> Advisor:
    """The Advisor called in-process, to compare with what the API returns."""
    advisor = Advisor(checkpoint_path=tmp_path_factory.mktemp("direct") / "threads.sqlite", db_path=catalog)
    yield advisor
    advisor.close()


def stream_chat(client: httpx2.Client, body: dict) -> tuple[httpx2.Response, list[tuple[str, dict]]]:
    """POST /api/chat/stream and parse the whole event stream."""
    with client.stream("POST", "/api/chat/stream", json=body) as response:
        text = "".join(response.iter_text())
    return response, parse_sse(text)


def assert_error(response: httpx2.Response, status: int, code: str) -> dict:
    """The response is a JSON error with this status and code and no traceback."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == code and body["error"]["message"]
    assert "Traceback" not in response.text and 'File "' not in response.text
    return body["error"]


# ------------------------------------------------------------------------------------------------------------ chat


def test_chat_returns_the_advisors_result_plus_thread_id(client, direct):
    response = client.post("/api/chat", json={"message": ITALIAN_JOB})
    assert response.status_code == 200
    result = response.json()
    assert result["thread_id"] and result["language"] == "it"
    assert without_thread(result) == without_thread(direct.respond(ITALIAN_JOB))
    assert result["offers"] and result["estimate"]["breakdown_gib"]


def test_stream_sends_progress_then_one_final_event_equal_to_the_json_answer(client):
    response, events = stream_chat(client, {"message": ITALIAN_JOB})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    names = [name for name, _ in events]
    assert names[-1] == "final" and names.count("final") == 1 and "error" not in names
    progress = [data for name, data in events if name == "progress"]
    nodes = [p["node"] for p in progress]
    assert {"estimate", "rank", "write"} <= set(nodes)
    assert nodes.index("estimate") < nodes.index("rank") < nodes.index("write")
    assert all(p["label"].strip() for p in progress)
    rank_label = next(p["label"] for p in progress if p["node"] == "rank")
    assert any(ch.isdigit() for ch in rank_label)  # "confronto 5.364 offerte…": the count of offers checked
    final = events[-1][1]["result"]
    plain = client.post("/api/chat", json={"message": ITALIAN_JOB}).json()
    assert without_thread(final) == without_thread(plain)
    assert final["thread_id"] != plain["thread_id"]
    verdicts = [i for i, (name, _) in enumerate(events) if name == "verdict"]  # the card before the text is phrased
    assert len(verdicts) == 1 and events[verdicts[0]][1]["verdict"] == final["verdict"]
    assert events.index(("progress", progress[nodes.index("write")])) < verdicts[0] < len(events) - 1


def test_stream_events_are_encoded_like_the_json_answer(client):
    """Every event's data line is the compact UTF-8 JSON that POST /api/chat sends (one encoder, not FastAPI's
    generic SSE one with ASCII escapes and spaced separators)."""
    with client.stream("POST", "/api/chat/stream", json={"message": ITALIAN_JOB}) as response:
        text = "".join(response.iter_text())
    lines = [line[len("data: ") :] for line in text.splitlines() if line.startswith("data: ")]
    assert lines
    for line in lines:
        assert line == json.dumps(json.loads(line), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    plain = client.post("/api/chat", json={"message": ITALIAN_JOB}).text
    assert plain == json.dumps(json.loads(plain), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    assert "€" in lines[-1] and "\\u20ac" not in lines[-1]  # the euro budget, as /api/chat writes it


def test_follow_up_continues_the_thread(client):
    first = client.post("/api/chat", json={"message": ITALIAN_JOB}).json()
    _, events = stream_chat(
        client, {"message": FOLLOW_UP, "thread_id": first["thread_id"], "thread_token": first["thread_token"]}
    )
    second = events[-1][1]["result"]
    assert second["thread_id"] == first["thread_id"]
    assert second["intent"] == "follow_up"
    assert second["spec"]["num_gpus"] == 2
    assert second["spec"]["model"] == first["spec"]["model"] and second["spec"]["budget"] == first["spec"]["budget"]
    alone = client.post("/api/chat", json={"message": FOLLOW_UP}).json()
    assert alone["spec"] is None or alone["spec"].get("model") is None  # without the thread there is no job


def test_explicit_language_wins(client):
    result = client.post("/api/chat", json={"message": ITALIAN_JOB, "language": "en"}).json()
    assert result["language"] == "en"


def test_bad_advisor_input_in_a_stream_is_refused_before_the_stream_not_a_broken_stream(client):
    """The schema names the fields `changes` may carry: an unknown one is a JSON 422 before any event, as over
    /api/chat (the advisor's own refusal, as an error event, is tested in tests/test_stream_errors.py)."""
    error = assert_error(
        client.post("/api/chat/stream", json={"message": "", "changes": {"no_such_field": 1}}), 422, "invalid_input"
    )
    assert "no_such_field" in error["message"]


def test_bad_advisor_input_over_json_is_422(client):
    error = assert_error(
        client.post("/api/chat", json={"message": "", "changes": {"no_such_field": 1}}), 422, "invalid_input"
    )
    assert "no_such_field" in error["message"]


def test_conversation_continues_after_server_restart(tmp_path, catalog):
    settings = test_settings(tmp_path, catalog)
    with serve(settings) as first_server:
        first = httpx2.post(first_server.url + "/api/chat", json={"message": ITALIAN_JOB}, timeout=60).json()
    assert (tmp_path / "threads.sqlite").stat().st_size > 0
    with serve(settings) as second_server, httpx2.Client(base_url=second_server.url, timeout=60) as http:
        _, events = stream_chat(
            http, {"message": FOLLOW_UP, "thread_id": first["thread_id"], "thread_token": first["thread_token"]}
        )
    second = events[-1][1]["result"]
    assert events[-1][0] == "final"
    assert second["intent"] == "follow_up" and second["spec"]["num_gpus"] == 2
    assert second["spec"]["model"] == first["spec"]["model"]
    assert second["spec"]["method"] == first["spec"]["method"] == "qlora"


def test_internal_failure_is_a_json_error_with_an_id_and_no_traceback(tmp_path, catalog):
    with serve(test_settings(tmp_path, catalog)) as running:
        running.app.state.resources.advisor.close()  # the checkpoint database goes away under the server
        with httpx2.Client(base_url=running.url, timeout=60) as http:
            error = assert_error(http.post("/api/chat", json={"message": ITALIAN_JOB}), 500, "internal_error")
            assert error["error_id"]
            # the thread is opened (minted, its owner stored) before the stream starts: a plain JSON error
            assert assert_error(http.post("/api/chat/stream", json={"message": ITALIAN_JOB}), 500, "internal_error")[
                "error_id"
            ]


# ----------------------------------------------------------------------------------------------------------- limits


def test_body_over_the_limit_is_413_with_and_without_content_length(client, server):
    limit = server.app.state.resources.settings.max_body_bytes
    body = json.dumps({"message": "a" * (limit + 10)}).encode()
    assert_error(
        client.post("/api/chat", content=body, headers={"content-type": "application/json"}), 413, "body_too_large"
    )

    def chunks():
        for start in range(0, len(body), 1000):
            yield body[start : start + 1000]

    assert_error(
        client.post("/api/chat", content=chunks(), headers={"content-type": "application/json"}), 413, "body_too_large"
    )


def test_slack_events_have_their_own_larger_body_limit(tmp_path, catalog, monkeypatch):
    """With Slack mounted (credentials set), a body 4x the API's limit reaches Slack's signature check (401, not
    413); past Slack's own 1 MiB limit it is refused before it is read, with or without Content-Length."""
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("SLACK_SIGNING_SECRET", SIGNING_SECRET)
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    form = {"content-type": "application/x-www-form-urlencoded"}
    with serve(test_settings(tmp_path, catalog)) as running, httpx2.Client(base_url=running.url, timeout=60) as http:
        limit = running.app.state.resources.settings.max_body_bytes
        assert any(getattr(route, "path", None) == "/slack/events" for route in running.app.routes)
        big = http.post("/slack/events", content=b"payload=" + b"a" * (limit * 4), headers=form)
        assert big.status_code == 401  # read in full and refused by the signature check, not by size
        assert_error(http.post("/api/chat", content=b"a" * (limit * 4), headers=form), 413, "body_too_large")
        huge = b"payload=" + b"a" * (1_048_576 + 1)
        assert_error(http.post("/slack/events", content=huge, headers=form), 413, "body_too_large")
        chunks = (huge[i : i + 65_536] for i in range(0, len(huge), 65_536))
        assert_error(http.post("/slack/events", content=chunks, headers=form), 413, "body_too_large")


def test_message_over_the_limit_is_422_message_too_long(client, server):
    limit = server.app.state.resources.settings.max_message_chars
    error = assert_error(client.post("/api/chat", json={"message": "a" * (limit + 1)}), 422, "message_too_long")
    assert str(limit) in error["message"]
    assert_error(client.post("/api/chat/stream", json={"message": "a" * (limit + 1)}), 422, "message_too_long")
    assert client.post("/api/chat", json={"message": "a" * limit}).status_code == 200


@pytest.mark.parametrize(
    "body, field",
    [
        ({"message": "ciao", "language": "fr"}, "language"),
        ({"message": "ciao", "thread_id": "../../etc/passwd"}, "thread_id"),
        ({"message": 42}, "message"),
        ({"text": "ciao"}, "message"),
        ({"message": "ciao", "prefer": "fast"}, "prefer"),
    ],
)
def test_invalid_chat_bodies_are_422_naming_the_field(client, body, field):
    error = assert_error(client.post("/api/chat", json=body), 422, "invalid_input")
    assert field in error["message"]


def test_empty_message_and_broken_json(client):
    assert_error(client.post("/api/chat", json={"message": "   "}), 422, "empty_message")
    error = assert_error(
        client.post("/api/chat", content=b"{broken", headers={"content-type": "application/json"}), 422, "invalid_input"
    )
    assert "JSON" in error["message"]


def test_unknown_path_and_wrong_method_are_json(client):
    assert_error(client.get("/api/nope"), 404, "not_found")
    assert_error(client.get("/api/chat"), 405, "method_not_allowed")
    assert_error(client.delete("/healthz"), 405, "method_not_allowed")


def test_rate_limit_is_429_with_retry_after(tmp_path, catalog):
    with serve(test_settings(tmp_path, catalog, rate_per_minute=6, rate_burst=2)) as running:
        with httpx2.Client(base_url=running.url, timeout=60) as http:
            codes = [http.get("/api/faq", params={"question": "spot?"}).status_code for _ in range(3)]
            assert codes == [200, 200, 429]
            limited = http.post("/api/chat", json={"message": ITALIAN_JOB})
            assert_error(limited, 429, "rate_limited")
            assert 1 <= int(limited.headers["retry-after"]) <= 10
            assert http.get("/healthz").status_code == 200  # only /api/ is limited


def test_mcp_shares_the_api_rate_limit(tmp_path, catalog):
    """Tool calls over /mcp draw from the same bucket as /api/*: two requests pass, the third is 429 (it was not
    limited at all: 15 `rank` calls passed where /api/ allowed 10)."""
    with serve(test_settings(tmp_path, catalog, rate_per_minute=6, rate_burst=2)) as running:
        with httpx2.Client(base_url=running.url, timeout=60) as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
            headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
            codes = [http.post("/mcp", json=body, headers=headers).status_code for _ in range(2)]
            assert 429 not in codes
            assert http.post("/mcp", json=body, headers=headers).status_code == 429
            assert http.get("/api/faq", params={"question": "spot?"}).status_code == 429  # one bucket


# ------------------------------------------------------------------------------------------------------------- CORS


def test_cors_preflight_allows_listed_origins_only(client):
    allowed = client.options(
        "/api/chat/stream",
        headers={
            "Origin": "https://docs.example.com",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type",
        },
    )
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "https://docs.example.com"
    assert "POST" in allowed.headers["access-control-allow-methods"]
    assert "content-type" in allowed.headers["access-control-allow-headers"].lower()

    rejected = client.options(
        "/api/chat/stream", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
    )
    assert_error(rejected, 400, "cors_rejected")
    assert "access-control-allow-origin" not in rejected.headers


def test_cors_headers_on_actual_requests(client):
    ok = client.post("/api/faq", json={"question": "spot?"}, headers={"Origin": "https://docs.example.com"})
    assert ok.headers["access-control-allow-origin"] == "https://docs.example.com"
    other = client.post("/api/faq", json={"question": "spot?"}, headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in other.headers


# ------------------------------------------------------------------------------------------------------------ tools


def test_estimate_endpoint_matches_the_estimator(client):
    body = {"model": "llama-3.1-8b", "method": "qlora", "gpu": "L4"}
    response = client.post("/api/estimate", json=body)
    assert response.status_code == 200
    assert response.json() == estimate(EstimateRequest(**body)).model_dump(mode="json")
    error = assert_error(client.post("/api/estimate", json={"method": "qlora"}), 422, "invalid_input")
    assert "model" in error["message"]
    assert_error(client.post("/api/estimate", json={"model": "no-such-model-xyz"}), 422, "invalid_input")
    assert_error(client.post("/api/estimate", json={"config_path": "/etc/passwd"}), 422, "invalid_input")


def test_catalog_endpoint_filters_and_sorts(client):
    offers = client.get("/api/catalog", params={"gpu": "H100", "limit": 5, "sort": "price"}).json()
    assert 1 <= len(offers) <= 5
    assert {o["gpu"] for o in offers} == {"H100"}
    prices = [o["price_per_hour"] for o in offers if o["price_per_hour"] is not None]
    assert prices == sorted(prices)
    spot = client.get("/api/catalog", params={"spot_only": True, "max_price": 2, "limit": 50}).json()
    assert spot and all(o["spot_price_per_hour"] <= 2 for o in spot)
    assert_error(client.get("/api/catalog", params={"sort": "DROP TABLE"}), 422, "invalid_input")
    assert_error(client.get("/api/catalog", params={"limit": 0}), 422, "invalid_input")


def test_rank_endpoint_ranks_by_expected_cost(client, catalog):
    spec = {"language": "en", "method": "qlora", "model": "llama-3.1-8b", "budget": {"amount": 50, "currency": "EUR"}}
    result = client.post("/api/rank", params={"limit": 5}, json=spec).json()
    assert 1 <= len(result["offers"]) <= 5 and all(o["fits"] for o in result["offers"])
    # costs recomputed from the catalog's raw rows; the headline is the cheapest or a near-tie of it (5 % or $1,
    # README), and no plan of the full listing is cheaper than the cheapest one returned
    assert_headline_rule(catalog, result["offers"])
    every = [o.model_dump() for o in rank_offers(JobSpec.model_validate(spec), db_path=catalog, limit=100_000).offers]
    assert len(every) > len(result["offers"])
    assert min(raw_cost(catalog, o) for o in result["offers"]) == pytest.approx(
        min(raw_cost(catalog, o) for o in every)
    )
    assert result["fx"]["from_currency"] == "EUR" and result["budget_usd"] == pytest.approx(50 * result["fx"]["rate"])
    assert all(o["est_cost"] <= result["budget_usd"] for o in every)
    assert_error(client.post("/api/rank", json={"language": "en", "num_gpus": -1}), 422, "invalid_input")


def test_spot_endpoint_matches_the_calculator(client):
    body = {"job_hours": 10, "provider": "runpod", "spot_price_per_hour": 1.1, "on_demand_price_per_hour": 2.2}
    assert client.post("/api/spot", json=body).json() == assess_spot(SpotRiskRequest(**body)).model_dump(mode="json")
    assert_error(client.post("/api/spot", json={"job_hours": -1}), 422, "invalid_input")


def test_faq_endpoint_get_and_post(client):
    question = "Posso usare le istanze spot per il fine-tuning?"
    expected = answer_question(question).model_dump(mode="json")
    assert client.get("/api/faq", params={"question": question}).json() == expected
    assert client.post("/api/faq", json={"question": question}).json() == expected
    assert expected["language"] == "it" and expected["citations"]
    assert_error(client.get("/api/faq"), 422, "invalid_input")


# ------------------------------------------------------------------------------------------------------------- meta


def test_healthz_docs_and_demo(client, server):
    assert client.get("/healthz").json() == {
        "status": "ok",
        "version": server.app.version,
        "advisor": True,
        "storage": True,
    }
    schema = client.get("/openapi.json").json()
    for path in (
        "/api/chat",
        "/api/chat/stream",
        "/api/estimate",
        "/api/catalog",
        "/api/rank",
        "/api/spot",
        "/api/faq",
        "/healthz",
    ):
        assert path in schema["paths"], path
    chat_body = schema["paths"]["/api/chat"]["post"]["requestBody"]["content"]["application/json"]
    assert chat_body["examples"]["italian"]["value"]["message"] == ITALIAN_JOB
    assert "text/event-stream" in json.dumps(schema["paths"]["/api/chat/stream"])
    assert client.get("/docs").status_code == 200
    demo = client.get("/demo")
    tag = f'<script src="{server.url}/widget/widget.js" data-api="{server.url}" data-lang="it" defer></script>'
    assert tag in demo.text
    assert client.get("/widget/widget.js").status_code == 200
    assert set(client.get("/widget/i18n.json").json()) == {"it", "id", "en"}


def test_a_bare_preference_reranks_the_threads_job(client):
    """The widget's 'Faster' chip sends only {prefer: speed}: the thread's job is re-ranked fastest first."""
    first = client.post("/api/chat", json={"message": "LoRA on Llama 3 8B, 100k examples, budget $200"}).json()
    assert first["offers"]
    faster = client.post(
        "/api/chat",
        json={"message": "", "prefer": "speed", "thread_id": first["thread_id"], "thread_token": first["thread_token"]},
    )
    assert faster.status_code == 200, faster.text
    offers = faster.json()["offers"]
    assert offers and offers[0]["est_hours"] == min(o["est_hours"] for o in offers)
    assert faster.json()["spec"]["model"] == first["spec"]["model"]
    assert_error(client.post("/api/chat", json={"message": "  "}), 422, "empty_message")


def test_the_streams_result_is_written_by_the_json_answers_encoder(client):
    """A number both encoders can write differently (1e-05 vs 0.00001) reads the same in the final event as in the
    JSON answer: one encoder (pydantic-core's, the response model's) for both."""
    body = {"message": ITALIAN_JOB, "changes": {"budget": {"amount": 0.00001, "currency": "USD"}}}
    plain = client.post("/api/chat", json=body).text
    with client.stream("POST", "/api/chat/stream", json=body) as response:
        text = "".join(response.iter_text())
    final = next(line for line in text.splitlines() if line.startswith('data: {"type":"final"'))
    amount = '"budget":{"amount":'
    written = {part.split(amount, 1)[1].split(",", 1)[0] for part in (plain, final) if amount in part}
    assert len(written) == 1 and written == {plain.split(amount, 1)[1].split(",", 1)[0]}, written
