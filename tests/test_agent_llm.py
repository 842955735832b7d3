"""The agent with an LLM configured: a local OpenAI-compatible server, the real openai client, every claim checked.

Bad rewordings (numbers in words, draft figures moved onto other facts, an invented provider, an injection echo, a
content-free reply) must never become the answer, over JSON and SSE, and SSE must stream only verified text.
"""

from __future__ import annotations

import json
import re

import httpx2
import pytest

from agent.llm import client as llm
from agent.llm import parse as parse_llm
from agent.llm.phrasing import note
from agent.service import Advisor
from tests.fake_openai import running
from tests.web_server import parse_sse, serve, test_settings
from tools.catalog.query import ensure_db

MESSAGE = "QLoRA su Llama 3.1 8B, 20M token, budget 50 euro"


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("llm-home")


@pytest.fixture(scope="module")
def catalog(home):
    return ensure_db(home / "catalog.sqlite")


@pytest.fixture(scope="module")
def draft(home, catalog):
    """The offline answer for MESSAGE: what the LLM is asked to reword."""
    advisor = Advisor(checkpoint_path=home / "offline.sqlite", db_path=catalog)
    try:
        return advisor.respond(MESSAGE)["answer"]
    finally:
        advisor.close()


def configure(monkeypatch, server, timeout_s: str = "2") -> None:
    """Point the agent at the fake server."""
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("GPU_ADVISOR_MODEL", "test-model")
    monkeypatch.setenv("GPU_ADVISOR_LLM_TIMEOUT_S", timeout_s)
    monkeypatch.delenv("GPU_ADVISOR_OFFLINE", raising=False)
    llm.breaker.reset()


@pytest.fixture()
def llm_advisor(monkeypatch, home, catalog):
    """An advisor talking to a fake OpenAI server; yields (advisor, server)."""
    with running() as server:
        configure(monkeypatch, server)
        advisor = Advisor(checkpoint_path=home / "llm.sqlite", db_path=catalog)
        yield advisor, server
        advisor.close()
    llm.breaker.reset()


@pytest.fixture(scope="module")
def web_server(home, catalog, tmp_path_factory):
    """One real app under uvicorn with the LLM configured; yields (httpx client, fake LLM server)."""
    with pytest.MonkeyPatch.context() as monkeypatch, running() as server:
        configure(monkeypatch, server)
        with (
            serve(test_settings(tmp_path_factory.mktemp("web"), catalog)) as app,
            httpx2.Client(base_url=app.url, timeout=60) as client,
        ):
            yield client, server
    llm.breaker.reset()


@pytest.fixture()
def web(web_server):
    """The shared web server, with an empty answer queue and a closed breaker."""
    web_server[1].answers.clear()
    llm.breaker.reset()
    return web_server


def parse_answer() -> str:
    """A valid structured parse of MESSAGE, as the LLM would return it."""
    values = {
        "model": "llama-3.1-8b",
        "method": "qlora",
        "dataset_tokens": 20_000_000,
        "budget": {"amount": 50, "currency": "EUR"},
    }
    return json.dumps({name: values.get(name) for name in parse_llm.JobFields.model_fields})


def headline(draft: str) -> str:
    """The draft's first paragraph: the verdict."""
    return draft.split("\n\n")[0]


def moved_figures(draft: str) -> str:
    """The draft with two amounts of one currency swapped (same figures, each on the other's fact)."""
    first = draft.split("\n\n")[0]
    money = re.findall(r"\d+(?:[.,]\d+)* [$€]", first)
    pair = next(((a, b) for i, a in enumerate(money) for b in money[i + 1 :] if a[-1] == b[-1] and a != b), None)
    assert pair, first
    a, b = pair
    swapped = first.replace(a, "@A@", 1).replace(b, a, 1).replace("@A@", b, 1)
    return draft.replace(first, swapped, 1)


BAD_REWORDINGS = {
    "number_in_words": lambda d: headline(d) + "\n\nCon lo sconto di oggi costa solo dodici dollari l'ora.",
    "figures_moved": moved_figures,
    "invented_provider": lambda d: headline(d) + "\n\nMeglio ancora: usa evilcloud, non viene mai interrotto.",
    "injection_echo": lambda d: headline(d) + "\n\nNoleggia dal provider X a 1 $/h.",
    "content_free": lambda d: "Ecco la mia raccomandazione per il tuo lavoro di addestramento.",
    # issue 25: paragraphs with no number or name appended to a correct draft
    "credentials_appended": lambda d: d + "\n\nEmail your API keys to the support team so they can set up the pod.",
    "link_appended": lambda d: d + "\n\nClick here for a better deal: http://gpu-deals.example.com/offer",
    "action_appended": lambda d: d + "\n\nHo già prenotato la scheda per te e cancellato il vecchio catalogo.",
    "filler_appended": lambda d: d + "\n\nL'azienda si impegna a offrire soluzioni innovative ai suoi clienti.",
    # issue 29: the draft's own words turned around
    "budget_negated": lambda d: d.replace("Rientra nel tuo budget", "Non rientra nel tuo budget", 1),
}
MARKERS = {
    "number_in_words": "dodici",
    "invented_provider": "evilcloud",
    "injection_echo": "provider X",
    "content_free": "Ecco la mia",
    "figures_moved": None,
    "credentials_appended": "API keys",
    "link_appended": "http://",
    "action_appended": "prenotato",
    "filler_appended": "L'azienda",
    "budget_negated": "Non rientra",
}


def test_a_faithful_rewording_is_streamed_and_used(llm_advisor, draft):
    advisor, server = llm_advisor
    rephrased = "Ecco la mia proposta.\n\n" + draft
    server.reply(parse_answer())
    server.reply(rephrased)
    events = list(advisor.stream(MESSAGE))
    result = events[-1]["result"]
    assert result["answer"] == rephrased.strip() and result["parser"] == "llm" and result["notes"] == []
    deltas = "".join(e["text"] for e in events if e["type"] == "delta")
    assert deltas == result["answer"]  # only verified text was streamed, and all of it
    phrase_request = server.requests[-1]
    assert phrase_request["stream"] is True and draft in phrase_request["messages"][-1]["content"]


def test_paragraphs_in_another_order_keep_their_facts_and_pass(llm_advisor, draft):
    advisor, server = llm_advisor
    paragraphs = draft.split("\n\n")
    reordered = "\n\n".join([paragraphs[0]] + paragraphs[1:][::-1])
    server.reply(parse_answer())
    server.reply(reordered)
    assert advisor.respond(MESSAGE)["answer"] == reordered


@pytest.mark.parametrize("case", sorted(BAD_REWORDINGS))
def test_bad_rewordings_give_the_draft_and_say_so_over_json(web, draft, case):
    client, server = web
    bad = BAD_REWORDINGS[case](draft)
    assert bad != draft
    server.reply(parse_answer())
    server.reply(bad)
    result = client.post("/api/chat", json={"message": MESSAGE}).json()
    assert result["answer"] == draft
    assert result["notes"] == [note("unverified", "it")]


@pytest.mark.parametrize("case", sorted(BAD_REWORDINGS))
def test_bad_rewordings_are_never_streamed(web, draft, case):
    client, server = web
    server.reply(parse_answer())
    server.reply(BAD_REWORDINGS[case](draft))
    with client.stream("POST", "/api/chat/stream", json={"message": MESSAGE}) as response:
        events = parse_sse("".join(response.iter_text()))
    final = next(data for name, data in events if name == "final")["result"]
    assert final["answer"] == draft and final["notes"] == [note("unverified", "it")]
    deltas = [data["text"] for name, data in events if name == "delta"]
    assert deltas, "a streaming client gets text"
    streamed = "".join(deltas)
    marker = MARKERS[case] or headline(moved_figures(draft))  # the swapped verdict itself
    assert marker not in streamed
    # what was streamed is the draft's own opening paragraphs, verbatim (not judged by the product's claim checker)
    paragraphs = draft.split("\n\n")
    shown = streamed.split("\n\n")
    assert shown == paragraphs[: len(shown)], streamed


@pytest.mark.parametrize(
    "failure",
    [
        {"status": 500, "content": {"error": {"message": "boom"}}},
        {"status": 200, "content": "", "delay_s": 0},
        {"status": 200, "content": "too late", "delay_s": 3.0},
    ],
)  # past the 2 s deadline
def test_llm_failures_fall_back_to_the_offline_answer_and_say_so(llm_advisor, draft, failure):
    advisor, server = llm_advisor
    server.reply(parse_answer())
    server.reply(failure["content"], status=failure["status"], delay_s=failure.get("delay_s", 0))
    result = advisor.respond(MESSAGE)
    assert result["answer"] == draft and result["notes"]


def test_parser_failure_falls_back_offline_and_the_turn_still_answers(llm_advisor, draft):
    advisor, server = llm_advisor
    for _ in range(2):  # structured output, then JSON mode: both garbage
        server.reply("this is not json")
    server.reply(draft)  # the phrasing step repeats the draft
    result = advisor.respond(MESSAGE)
    assert result["parser"] == "offline" and result["spec"]["model"] == "llama-3.1-8b"
    assert result["offers"] and result["answer"] == draft
    # the LLM's (checked) wording is shown: no note saying the answer was written offline (issue 29: notes say
    # exactly what happened); `parser` says the job was read offline
    assert result["notes"] == []
