"""LLM parsing against a local HTTP server speaking the OpenAI chat-completions wire format (real openai client)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator

import pytest

from agent.llm import client as llm
from agent.llm import parse as parse_llm
from agent.parsing.parse import parse_message
from tests.fake_openai import FakeOpenAI


def completion(content: str | None, refusal: str | None = None) -> dict:
    """A chat.completion body as OpenAI sends it."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content, "refusal": refusal},
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def fields(**values: object) -> str:
    """A full structured answer: every JobSpec field but language, null unless given."""
    names = [n for n in parse_llm.JobFields.model_fields]
    return json.dumps({n: values.get(n) for n in names})


@pytest.fixture()
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI()
    thread = threading.Thread(target=fake.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("GPU_ADVISOR_MODEL", "test-model")
    monkeypatch.setenv("GPU_ADVISOR_LLM_TIMEOUT", "1.5")
    monkeypatch.delenv("GPU_ADVISOR_OFFLINE", raising=False)
    llm.breaker.reset()
    yield fake
    fake.shutdown()
    fake.server_close()


def test_structured_answer_is_used_and_offline_values_win(server: FakeOpenAI) -> None:
    server.answers.append(
        (200, completion(fields(model="Llama 3 70B", method="qlora", num_gpus=2, precision="bf16", gpu="h100")), 0)
    )
    result = parse_message("QLoRA su Llama 3 70B con 8 H100, in bf16 se possibile", use_llm=None)
    assert result.parser == "llm" and result.fallback_reason is None
    assert result.spec.num_gpus == 8  # the offline reading of "8 H100" beats the LLM's 2
    assert (result.spec.model, result.spec.gpu, result.spec.precision) == ("llama-3-70b", "H100", "bf16")
    request = server.requests[0]
    assert request["model"] == "test-model" and request["response_format"]["type"] == "json_schema"
    assert request["response_format"]["json_schema"]["strict"] is True


def test_llm_fills_a_field_the_offline_parser_missed(server: FakeOpenAI) -> None:
    server.answers.append((200, completion(fields(method="lora", precision="bf16")), 0))
    result = parse_message("LoRA, weights in brain-float sixteen", use_llm=True)
    assert result.parser == "llm" and result.mentioned == ["method", "precision"]
    assert (result.spec.method, result.spec.precision) == ("lora", "bf16")


def test_unknown_model_names_from_the_llm_are_dropped(server: FakeOpenAI) -> None:
    server.answers.append((200, completion(fields(model="SuperModel 9000", params_b=9.0)), 0))
    result = parse_message("something about my model, nine billion parameters", use_llm=True)
    assert result.spec.model is None and result.spec.params_b == 9.0


def test_json_schema_unsupported_retries_in_json_mode(server: FakeOpenAI) -> None:
    server.answers.append(
        (400, {"error": {"message": "response_format json_schema not supported", "type": "invalid"}}, 0)
    )
    server.answers.append((200, completion("```json\n" + fields(method="lora", epochs=3) + "\n```"), 0))
    result = parse_message("LoRA for three passes", use_llm=True)
    assert result.parser == "llm" and result.spec.method == "lora" and result.spec.epochs == 3
    assert [r["response_format"]["type"] for r in server.requests] == ["json_schema", "json_object"]
    assert "JSON schema" in server.requests[1]["messages"][0]["content"]


def test_garbage_json_falls_back_to_offline(server: FakeOpenAI) -> None:
    server.answers += [(200, completion("{not json"), 0), (200, completion("still not json"), 0)]
    result = parse_message("dua GPU", use_llm=True)
    assert result.parser == "offline" and result.spec.num_gpus == 2
    assert result.fallback_reason == "the LLM answer was not a valid job spec"


def test_out_of_range_numbers_are_rejected(server: FakeOpenAI) -> None:
    server.answers += [(200, completion(fields(num_gpus=-4)), 0), (200, completion(fields(epochs=0)), 0)]
    result = parse_message("4 GPU", use_llm=True)
    assert result.parser == "offline" and result.spec.num_gpus == 4


def test_http_500_falls_back_to_offline(server: FakeOpenAI) -> None:
    server.answers.append((500, {"error": {"message": "boom"}}, 0))
    result = parse_message("LoRA su Mistral 7B", use_llm=True)
    assert result.parser == "offline" and result.fallback_reason == "the LLM server answered HTTP 500"
    # JSON mode, then a plain prompt, were tried after the 500 (an empty queue answers 500 too)
    assert result.spec.model == "mistral-7b" and len(server.requests) == 3


def test_slow_answer_times_out_and_falls_back(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPU_ADVISOR_LLM_TIMEOUT", "0.3")
    server.answers.append((200, completion(fields(method="lora")), 2.0))
    start = time.perf_counter()
    result = parse_message("QLoRA on Llama 3 8B", use_llm=True)
    assert time.perf_counter() - start < 1.8
    assert result.parser == "offline" and result.fallback_reason == "the LLM timed out"
    assert result.spec.method == "qlora"


def test_refusal_falls_back_to_offline(server: FakeOpenAI) -> None:
    server.answers.append((200, completion(None, refusal="I can't help with that."), 0))
    result = parse_message("full fine-tune of Qwen2.5 7B", use_llm=True)
    assert result.parser == "offline" and result.fallback_reason == "the LLM refused to answer"
    assert result.spec.method == "full_finetune"


def test_unreachable_server_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    llm.breaker.reset()
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    result = parse_message("LoRA", use_llm=True)
    assert result.parser == "offline" and result.fallback_reason == "could not reach the LLM server"


def test_offline_by_default_without_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert not parse_llm.llm_configured()
    assert parse_message("LoRA").parser == "offline"


def test_fields_the_message_does_not_support_are_dropped(server: FakeOpenAI) -> None:
    server.answers.append(
        (
            200,
            completion(
                fields(
                    method="qlora",
                    model="llama-3.1-8b",
                    num_gpus=7,
                    budget={"amount": 5, "currency": "USD"},
                    deadline_hours=1,
                    providers=["vast"],
                    regions=["eu-west-1"],
                    epochs=3,
                )
            ),
            0,
        )
    )
    answer = parse_llm.parse_with_llm("QLoRA su Llama 3.1 8B, 20M token", "it")
    assert answer.error is None and answer.spec is not None
    assert answer.mentioned == ["method", "model"]
    assert {"num_gpus", "budget", "deadline_hours", "providers", "regions", "epochs"} <= set(answer.dropped)
    server.answers.append((200, completion(fields(num_gpus=7, providers=["vast"])), 0))
    result = parse_message("QLoRA su Llama 3.1 8B, 20M token", use_llm=True)
    assert result.spec.num_gpus is None and result.spec.providers is None


def test_supported_fields_are_kept_in_every_language(server: FakeOpenAI) -> None:
    cases = [
        (
            "QLoRA su Llama 3.1 8B con 4 GPU, budget 200 euro, entro 3 giorni, spot ok, su runpod",
            "it",
            {
                "num_gpus": 4,
                "budget": {"amount": 200, "currency": "EUR"},
                "deadline_hours": 72,
                "interruptible_ok": True,
                "providers": ["runpod"],
            },
        ),
        (
            "LoRA Mistral 7B pakai dua GPU, anggaran 2 juta rupiah, dalam seminggu",
            "id",
            {"num_gpus": 2, "budget": {"amount": 2_000_000, "currency": "IDR"}, "deadline_hours": 168},
        ),
        (
            "full fine-tune of Llama 3 70B on eight H100s, context 8k, 3 epochs",
            "en",
            {"num_gpus": 8, "seq_len": 8192, "epochs": 3, "gpu": "H100"},
        ),
    ]
    for text, language, values in cases:
        server.answers.append((200, completion(fields(**values)), 0))
        answer = parse_llm.parse_with_llm(text, language)
        assert answer.error is None and not answer.dropped, (text, answer.dropped)
        for name, value in values.items():
            got = getattr(answer.spec, name)
            assert (got.model_dump() if hasattr(got, "model_dump") else got) == value, (name, got)


def test_an_unknown_provider_or_gpu_the_user_named_gets_a_clarifying_question(server: FakeOpenAI) -> None:
    server.answers.append((200, completion(fields(method="lora", providers=["x"])), 0))
    answer = parse_llm.parse_with_llm("LoRA su Mistral 7B, solo sul provider x", "it")
    assert answer.spec.providers is None and "providers" in answer.dropped
    assert answer.clarify and "x" in answer.clarify and "runpod" in answer.clarify
    server.answers.append((200, completion(fields(method="lora", gpu="H300")), 0))
    answer = parse_llm.parse_with_llm("LoRA on Mistral 7B with an H300", "en")
    assert answer.spec.gpu is None and answer.clarify and "H300" in answer.clarify


def test_a_server_error_on_the_strict_schema_tries_json_mode_and_is_not_a_breaker_failure(server: FakeOpenAI) -> None:
    server.answers.append((500, {"error": {"message": "response_format json_schema is not supported"}}, 0))
    server.answers.append((200, completion(fields(method="lora")), 0))
    answer = parse_llm.parse_with_llm("LoRA on Mistral 7B", "en")
    assert answer.error is None and answer.mode == "json_object" and answer.spec.method == "lora"
    assert [r["response_format"]["type"] for r in server.requests] == ["json_schema", "json_object"]
    for _ in range(5):  # a server that always rejects the strict schema never opens the breaker
        server.answers.append((500, {"error": {}}, 0))
        server.answers.append((200, completion(fields(method="lora")), 0))
        assert parse_llm.parse_with_llm("LoRA", "en").error is None
    assert not llm.breaker.is_open


@pytest.mark.parametrize(
    ("message", "llm_fields", "dropped", "kept"),
    [
        ("QLoRA su Llama 3.1 8B, 20M token", {"method": "qlora", "seq_len": 8192}, "seq_len", "method"),
        (
            "LoRA on Mistral 7B, max 2 GPU",
            {"method": "lora", "num_gpus": 2, "budget": {"amount": 2, "currency": "EUR"}},
            "budget",
            "num_gpus",
        ),
        ("LoRA su Mistral 7B con 4 GPU", {"method": "lora", "deadline_hours": 4}, "deadline_hours", "method"),
    ],
)
def test_a_number_written_for_another_field_does_not_support_a_parsed_field(
    server: FakeOpenAI, message, llm_fields, dropped, kept
) -> None:
    server.answers.append((200, completion(fields(**llm_fields)), 0))
    answer = parse_llm.parse_with_llm(message, "it")
    assert answer.error is None and dropped in answer.dropped and kept in answer.mentioned, answer


def test_a_number_with_its_own_unit_still_supports_its_field(server: FakeOpenAI) -> None:
    server.answers.append(
        (200, completion(fields(method="lora", seq_len=8192, num_gpus=2, budget={"amount": 50, "currency": "EUR"})), 0)
    )
    answer = parse_llm.parse_with_llm("LoRA su Mistral 7B, seq 8k, 2 GPU, budget 50 euro", "it")
    assert answer.error is None and {"seq_len", "num_gpus", "budget"} <= set(answer.mentioned), answer


def test_a_server_that_rejects_every_response_format_gets_the_schema_in_a_plain_prompt(server: FakeOpenAI) -> None:
    """issue 29: structured output falls back after any non-2xx, down to a plain prompt (the schema is in it)."""

    def no_response_format(body: dict) -> tuple[int, dict] | None:
        if body.get("response_format"):
            return 400, {
                "object": "error",
                "message": "response_format is not supported",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            }
        return None

    server.check = no_response_format
    server.answers.append((200, completion("```json\n" + fields(method="lora") + "\n```"), 0))
    answer = parse_llm.parse_with_llm("LoRA on Mistral 7B", "en")
    assert answer.error is None and answer.mode == "plain" and answer.spec.method == "lora"
    assert [(r.get("response_format") or {}).get("type") for r in server.requests] == [
        "json_schema",
        "json_object",
        None,
    ]
    assert "schema" in server.requests[-1]["messages"][0]["content"].lower() and not llm.breaker.is_open
