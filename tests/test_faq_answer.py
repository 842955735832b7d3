"""`gpu-advisor ask`: grounded answers in the user's language, no-answer, fourth language, odd input, LLM rephrasing."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agent.faq_answer import answer_question, llm_rephraser
from agent.llm.parse import make_client
from cli.app import main
from kb import entry


def ask_json(capsys, *args: str) -> dict:
    """Run `gpu-advisor ask --json ...` offline and parse its single JSON document."""
    assert main(["ask", "--json", "--offline", *args]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("question", "language", "top"),
    [
        ("posso usare le istanze spot per addestrare?", "it", {"training.faq_spot", "training.provider_spot"}),
        ("fine-tuning pakai spot aman?", "id", {"fine_tuning.faq_spot"}),
        ("why does the interconnect matter for multi-GPU training?", "en", {"training.faq_interconnect"}),
    ],
)
def test_ask_json_answers_in_the_question_language_from_the_top_citation(capsys, question, language, top):
    data = ask_json(capsys, question)
    assert set(data) == {"language", "answer", "citations"}
    assert data["language"] == language
    first = data["citations"][0]
    assert first["id"] in top
    assert set(first) == {"id", "article", "title", "language", "text"}
    assert all(c["language"] == language for c in data["citations"])
    assert first["text"] == entry(first["id"], language).text
    assert first["text"] in data["answer"]


def test_explicit_language_wins_and_the_same_entry_is_cited_in_it(capsys):
    english = ask_json(capsys, "is spot safe for training?")
    italian = ask_json(capsys, "is spot safe for training?", "--lang", "it")
    assert italian["language"] == "it"
    assert italian["citations"][0]["id"] == english["citations"][0]["id"]
    assert italian["citations"][0]["text"] != english["citations"][0]["text"]


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("che tempo fa domani a Roma?", "it"),
        ("resep rendang yang enak gimana?", "id"),
        ("who won the world cup in 2006?", "en"),
    ],
)
def test_no_answer_is_a_plain_statement_without_citations(capsys, question, language):
    data = ask_json(capsys, question)
    assert data["language"] == language
    assert data["citations"] == []
    assert data["answer"]


def test_no_answer_statements_differ_per_language(capsys):
    answers = {ask_json(capsys, "ricetta della carbonara", "--lang", lang)["answer"] for lang in ("it", "id", "en")}
    assert len(answers) == 3


@pytest.mark.parametrize(
    "question",
    [
        "Wie viel GPU-Speicher brauche ich für das Training eines Modells?",
        "¿Puedo usar instancias spot para entrenar mi modelo?",
        "Est-ce que je peux utiliser des instances spot pour l'entraînement ?",
    ],
)
def test_fourth_language_gets_a_polite_english_answer_naming_the_languages(capsys, question):
    data = ask_json(capsys, question)
    assert data["language"] == "en"
    assert data["citations"] == []
    for name in ("Italian", "Indonesian", "English"):
        assert name in data["answer"]


def test_emoji_only_input_is_answered_cleanly(capsys):
    data = ask_json(capsys, "🚀🔥🤖", "--lang", "id")
    assert data == {"language": "id", "answer": data["answer"], "citations": []}
    assert data["answer"]


def test_huge_input_is_answered(capsys):
    data = ask_json(capsys, "can I use spot instances for fine-tuning? " + "blah " * 200_000)
    assert data["citations"][0]["id"] == "fine_tuning.faq_spot"


@pytest.mark.parametrize("args", [["   "], [""], ["spot?", "--lang", "de"]])
def test_empty_question_or_bad_language_is_one_line_error(capsys, args):
    assert main(["ask", "--json", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("error: ") and captured.err.count("\n") == 1


def test_rich_output_shows_answer_and_citation_ids(capsys):
    assert main(["ask", "--offline", "does NVLink matter?"]) == 0
    out = capsys.readouterr().out
    assert "training.faq_interconnect" in out


class _ChatServer:
    """A local HTTP server speaking the OpenAI chat-completions wire format with a fixed reply or status."""

    def __init__(self, reply: str, status: int = 200):
        self.requests: list[dict] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.requests.append({"path": self.path, "body": body})
                payload = {
                    "id": "c1",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body["model"],
                    "choices": [
                        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply}}
                    ],
                }
                data = json.dumps(payload if status == 200 else {"error": {"message": "boom"}}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                """Keep test output quiet."""

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def chat_server():
    servers: list[_ChatServer] = []

    def start(reply: str, status: int = 200) -> _ChatServer:
        servers.append(_ChatServer(reply, status))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def _configure(monkeypatch, url: str) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("GPU_ADVISOR_MODEL", "local-model")
    monkeypatch.delenv("GPU_ADVISOR_OFFLINE", raising=False)


def test_llm_rephrasing_is_used_and_sees_only_the_cited_text(capsys, monkeypatch, chat_server):
    server = chat_server("Sì, se salvi spesso i checkpoint e riprendi senza problemi.")
    _configure(monkeypatch, server.url)
    assert main(["ask", "--json", "posso fare fine-tuning sulle spot?"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["answer"] == "Sì, se salvi spesso i checkpoint e riprendi senza problemi."
    assert data["citations"][0]["id"] == "fine_tuning.faq_spot"
    request = server.requests[0]
    assert request["path"].endswith("/chat/completions") and request["body"]["model"] == "local-model"
    assert data["citations"][0]["text"] in request["body"]["messages"][1]["content"]


@pytest.mark.parametrize(
    ("reply", "status"),
    [
        ("Yes, spot is fine: it saves 90% on an 8xH100 node.", 200),  # numbers the citations do not contain
        ("NO_ANSWER", 200),
        ("", 500),
    ],
)
def test_llm_failure_falls_back_to_the_extractive_answer_and_says_so(monkeypatch, chat_server, reply, status):
    server = chat_server(reply, status)
    _configure(monkeypatch, server.url)
    rephrase = llm_rephraser(make_client(timeout_s=5), "local-model")
    result = answer_question("is spot ok for fine-tuning?", rephraser=rephrase)
    top = result.citations[0]
    assert top.id == "fine_tuning.faq_spot"
    assert top.text in result.answer
    # a rejected rephrasing says so; only a failed call says the model was unavailable (issue 29)
    assert ("not backed by the guide" if reply.startswith("Yes") else "unavailable") in result.answer
    assert "90%" not in result.answer


BAD_FAQ_REPLIES = {
    "number_in_words": "It depends; QLoRA needs about twelve gigabytes on a single card.",
    "figures_moved": "Full fine-tuning needs 4 GPUs, while QLoRA fits on a single card.",
    "invented_provider": "It depends on the model size; use evilcloud, its GPUs are never preempted.",
    "injection_echo": "It depends on the model size. Rent from provider X at $1/h.",
    "content_free": "Great question! Let me know if you need anything else.",
    "link_appended": (
        "It depends on the model and the method: QLoRA fits large models on a single card. "
        "Compare prices at https://gpu-deals.example.com before you rent."
    ),
    "credentials_appended": (
        "It depends on the model and the method: QLoRA fits large models on a single card. "
        "Send your API key to support@gpu-deals.example.com and we will size it for you."
    ),
    "action_appended": (
        "It depends on the model and the method: QLoRA fits large models on a single card. "
        "I have booked a card for you."
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_FAQ_REPLIES))
def test_ask_never_shows_a_rephrasing_with_claims_the_citations_do_not_hold(capsys, monkeypatch, case):
    from agent.llm import client as llm
    from tests.fake_openai import running

    with running() as server:
        _configure(monkeypatch, server.base_url)
        llm.breaker.reset()
        server.reply(BAD_FAQ_REPLIES[case])
        assert main(["ask", "--json", "how much GPU memory do I need to fine-tune an LLM?"]) == 0
        assert len(server.requests) == 1
    data = json.loads(capsys.readouterr().out)
    assert BAD_FAQ_REPLIES[case] not in data["answer"]
    assert data["citations"][0]["text"] in data["answer"] and "not backed by the guide" in data["answer"]


def test_ask_shows_a_faithful_rephrasing(capsys, monkeypatch):
    from agent.llm import client as llm
    from tests.fake_openai import running

    reply = (
        "It depends on the model and the method: QLoRA quantizes the frozen base to 4 bits, so large models "
        "fit on a single card, while full fine-tuning may need several GPUs."
    )
    with running() as server:
        _configure(monkeypatch, server.base_url)
        llm.breaker.reset()
        server.reply(reply)
        assert main(["ask", "--json", "how much GPU memory do I need to fine-tune an LLM?"]) == 0
    assert json.loads(capsys.readouterr().out)["answer"] == reply
