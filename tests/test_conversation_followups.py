"""Conversation loose ends (issues 10 and 11): a bare 'A100' means either size, open FAQ questions get no yes/no
lead, answers name the limit that binds, LLM clarifying questions are asked back, an unreadable catalog still
answers, and no internal path reaches a user."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.faq_answer import answer_question, is_yes_no_question
from agent.parsing import parse_message
from agent.service import Advisor
from tools.catalog import Offer, build_db
from tools.ranking import clear_cache


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def offer(provider: str, instance: str, gpu: str, count: int, vram: float, price: float) -> Offer:
    """One on-demand catalog row."""
    return Offer(provider=provider, instance_type=instance, region="us-east-1", zone=None, gpu=gpu, gpu_count=count,
                 vram_gib_per_gpu=vram, price_per_hour=price, spot_price_per_hour=None,
                 interconnect="nvlink" if count > 1 else "none", source="test:1", snapshot_date="2026-11-29")


def catalog(tmp_path: Path, offers: list[Offer]) -> Path:
    """A real catalog database."""
    clear_cache()
    return build_db(tmp_path / "catalog.sqlite", offers, {"source": "test"})


# --- 1. a bare "A100" means either memory size ------------------------------------------------------------------

@pytest.mark.parametrize(("text", "gpu"), [
    ("LoRA su Mistral 7B con 2 A100", "A100"),
    ("fine-tune Mistral 7B on A100s", "A100"),
    ("pakai 8 V100", "V100"),
    ("LoRA on 2 A100 80GB", "A100-80GB"),
    ("proviamo con le A100 da 40GB", "A100-40GB"),
    ("let's try the 40GB A100s", "A100-40GB"),
    ("su 8 A100-80", "A100-80GB"),
])
def test_a_bare_family_name_is_kept_as_the_family(text: str, gpu: str) -> None:
    assert parse_message(text, use_llm=False).spec.gpu == gpu


def test_a_bare_a100_job_recommends_the_cheaper_80gb_pair(tmp_path: Path) -> None:
    """Issue 10: 2x A100-80GB at $4.20/h beats 2x A100-40GB at $6.38/h when the user just says 'A100'."""
    db = catalog(tmp_path, [offer("lambda", "2x_a100_40", "A100-40GB", 2, 40.0, 6.38),
                            offer("lambda", "2x_a100_80", "A100-80GB", 2, 80.0, 4.20)])
    advisor = Advisor(checkpoint_path=tmp_path / "threads.sqlite", db_path=db)
    try:
        result = advisor.respond("LoRA fine-tune Mistral 7B on 30M tokens on 2 A100")
    finally:
        advisor.close()
    offers = result["offers"]
    assert result["spec"]["gpu"] == "A100"
    assert offers[0]["gpu"] == "A100-80GB" and {o["gpu"] for o in offers} == {"A100-40GB", "A100-80GB"}


# --- 6. open FAQ questions do not start with a yes/no word ------------------------------------------------------

@pytest.mark.parametrize(("question", "yes_no"), [
    ("what's the cheapest way to fine-tune?", False),
    ("how do I fine tune", False),
    ("come faccio il fine-tuning?", False),
    ("bagaimana cara fine-tuning?", False),
    ("can I use spot instances for fine-tuning?", True),
    ("posso usare le istanze spot per il fine-tuning?", True),
    ("apakah saya bisa pakai spot untuk fine-tuning?", True),
])
def test_yes_no_questions_are_told_from_open_ones(question: str, yes_no: bool) -> None:
    assert is_yes_no_question(question) is yes_no


VERDICT_WORDS = ("yes", "no", "sì", "si", "ya", "tidak", "bukan", "bisa", "boleh")


@pytest.mark.parametrize("question", ["what's the cheapest way to fine-tune?", "how do I fine tune",
                                      "come faccio il fine-tuning?", "bagaimana cara fine-tuning?"])
def test_an_open_question_is_not_answered_with_a_verdict_word(question: str) -> None:
    answer = answer_question(question).answer
    first = answer.split()[0].strip(",.;:—").lower()
    assert first not in VERDICT_WORDS, answer[:80]
    assert answer[0].isupper()


def test_a_yes_no_question_keeps_its_verdict() -> None:
    answer = answer_question("can I use spot instances for fine-tuning?").answer
    assert answer.split()[0].strip(",.").lower() in ("yes", "no"), answer[:80]
