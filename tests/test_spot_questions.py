"""A question about the plan's spot use ("how many interruptions should I expect?", "why spot? is it safe?") is a
question about the plan, answered from its spot-risk result: the expected interruptions of a spot plan, or why the
plan is on-demand. It changes nothing, and is no what-if (the parser reads a spot word in it, as in "e se uso le
spot?", which stays one). Graded against rank_offers' own figures for the job."""

from __future__ import annotations

import pytest

from agent.service import Advisor
from contract.jobspec import JobSpec
from tools.ranking import rank_offers

SPOT_JOBS = {
    "en": "QLoRA on Llama 3 70B, 100M tokens, spot is fine",
    "it": "QLoRA su Llama 3 70B, 100M token, le spot vanno bene",
    "id": "QLoRA pada Llama 3 70B, 100 juta token, boleh spot",
}
INTERRUPTIONS = [
    ("en", "how many interruptions should I expect?"),
    ("en", "how often will it get preempted?"),
    ("it", "quante interruzioni devo mettere in conto?"),
    ("it", "ogni quanto verrà interrotto?"),
    ("id", "kira-kira berapa kali kena interupsi?"),
    ("id", "seberapa sering bakal diinterupsi?"),
]
ON_DEMAND_JOBS = {
    "en": "LoRA on Mistral 7B, 300M tokens, spot allowed",
    "it": "LoRA su Mistral 7B, 300M token, spot ammesse",
    "id": "LoRA pada Mistral 7B, 300 juta token, spot boleh",
}
SAFETY = [
    ("en", "is spot safe for this job?"),
    ("it", "le spot sono sicure per questo lavoro?"),
    ("id", "spot aman nggak untuk job ini?"),
]


def _spot_reason(spec: dict, advisor: Advisor) -> tuple[bool, dict]:
    """Whether the job's headline is spot, and its spot reason's params, from the ranking itself."""
    offer = rank_offers(JobSpec(**spec), db_path=advisor.db_path).model_dump(mode="json")["offers"][0]
    reason = next(r for r in offer["reasons"] if r["code"].startswith("spot_"))
    return offer["spot"], reason["params"]


def _one_decimal(value: float, language: str) -> str:
    """A figure as the answers write it with one decimal."""
    text = f"{value:.1f}"
    return text.replace(".", ",") if language in ("it", "id") else text


@pytest.mark.parametrize(("language", "question"), INTERRUPTIONS)
def test_the_interruptions_of_a_spot_plan_are_its_expected_preemptions(advisor, language, question):
    first = advisor.respond(SPOT_JOBS[language])
    spot, params = _spot_reason(first["spec"], advisor)
    assert spot, "the job's headline should be a spot plan"
    result = advisor.respond(question, thread_id=first["thread_id"])
    assert (result["act"], result["changed"], result["spec"]) == ("question", [], first["spec"])
    assert result["language"] == language
    assert _one_decimal(params["expected_preemptions"], language) in result["answer"], result["answer"]
    assert "spot" in result["answer"].lower()


@pytest.mark.parametrize(("language", "question"), SAFETY)
def test_asking_whether_spot_is_safe_on_an_on_demand_plan_says_why_on_demand(advisor, language, question):
    first = advisor.respond(ON_DEMAND_JOBS[language])
    spot, _params = _spot_reason(first["spec"], advisor)
    assert not spot, "the job's headline should be on-demand"
    result = advisor.respond(question, thread_id=first["thread_id"])
    assert (result["act"], result["changed"], result["spec"]) == ("question", [], first["spec"])
    assert "on-demand" in result["answer"].lower(), result["answer"]
    assert "spot" in result["answer"].lower()


@pytest.mark.parametrize(("language", "what_if"), [("en", "what if I use spot?"), ("it", "e se uso le spot?")])
def test_a_spot_what_if_stays_a_what_if(advisor, language, what_if):
    first = advisor.respond(ON_DEMAND_JOBS[language].rsplit(",", 1)[0])
    result = advisor.respond(what_if, thread_id=first["thread_id"])
    assert result["act"] == "what_if"


@pytest.mark.parametrize(
    ("language", "question", "unit"),
    [
        ("en", "how long will it take?", "million tokens"),
        ("it", "quanto ci mette?", "milioni di token"),
        ("id", "berapa lama?", "juta token"),
    ],
)
def test_a_duration_answer_names_the_tokens_it_trains_on(advisor, language, question, unit):
    """The duration answer's data line says what the figure counts ("100.0 million tokens", not "100.0 million")."""
    first = advisor.respond(SPOT_JOBS[language])
    result = advisor.respond(question, thread_id=first["thread_id"])
    assert result["act"] == "question"
    assert f"100{'.' if language == 'en' else ','}0 {unit}" in result["answer"], result["answer"]
