"""The conversation through the real graph (offline): yes/no questions, follow-ups, off-topic, verdict-first answers."""

from __future__ import annotations

import re

import pytest

from agent.service import Advisor
from agent.writing.format import money, number
from contract.jobspec import JobSpec
from tools.jobtime.topology import DEFAULT_MEMORY_MARGIN
from tools.memory.estimator import estimate_for_spec
from tools.ranking.rank import rank_offers

GB_TO_GIB = 1e9 / 2**30


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def _head(answer: str, lines: int = 3) -> str:
    """The first non-empty lines of an answer, markdown marks dropped."""
    return " ".join([line for line in answer.splitlines() if line.strip()][:lines]).replace("**", "")


# --- yes/no and feasibility -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "first_word"),
    [
        ("Can I full fine-tune Llama 3 8B on a single 24 GB GPU?", "No"),
        ("Posso fare il full fine-tuning di Llama 3 8B su una sola scheda da 24 GB?", "No"),
        ("Bisakah full fine-tuning Llama 3 8B di satu GPU 24 GB?", "Tidak"),
    ],
)
def test_a_feasibility_question_starts_with_no_and_the_estimators_numbers(advisor, message, first_word):
    result = advisor.respond(message)
    spec = JobSpec.model_validate(result["spec"])
    assert spec.num_gpus == 1 and spec.gpu_memory_gb == 24
    full = estimate_for_spec(spec, num_gpus=1, vram_gib=24 * GB_TO_GIB)
    qlora = estimate_for_spec(spec.model_copy(update={"method": "qlora"}), num_gpus=1, vram_gib=24 * GB_TO_GIB)
    language = result["language"]
    assert result["answer"].replace("**", "").startswith(f"{first_word} — ")
    assert number(full.per_gpu_gib, language, 1) in result["answer"].splitlines()[0]
    assert f"QLoRA (≈ {number(qlora.per_gpu_gib, language, 1)} GiB)" in result["answer"]
    assert result["verdict"]["answer_kind"] == "yes_no" and result["verdict"]["answer"] == "no"


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Is one A100 80GB enough to LoRA fine-tune Mistral 7B?", "Yes"),
        ("Una A100 da 40 GB basta per il full fine-tuning di Llama 3 8B?", "No"),
        ("Apakah satu A100 80GB cukup untuk QLoRA Llama 3 70B?", "Ya"),
    ],
)
def test_enough_basta_cukup_get_the_estimators_yes_or_no(advisor, message, expected):
    result = advisor.respond(message)
    spec = JobSpec.model_validate(result["spec"])
    estimate = estimate_for_spec(spec, num_gpus=1, gpu=spec.gpu)
    fits = estimate.per_gpu_gib <= (1 - DEFAULT_MEMORY_MARGIN) * estimate.fit.vram_gib
    assert result["answer"].replace("**", "").split(" ")[0] == expected
    assert (expected in ("Yes", "Ya", "Sì")) == fits
    if fits:  # a yes names the rental of that very card, and the structured verdict is that rental
        assert f"1× {spec.gpu}" in result["answer"] and result["verdict"]["gpu"] == spec.gpu


def test_a_follow_up_to_a_yes_no_question_is_answered_yes_or_no_again(advisor):
    first = advisor.respond("Can I full fine-tune Llama 3 8B on a single 24 GB GPU?")
    again = advisor.respond("and with QLoRA?", thread_id=first["thread_id"])
    assert again["verdict"]["answer_kind"] == "yes_no" and again["answer"].startswith("**Yes**")
    assert again["act"] == "what_if" and again["changed"] == [] and again["spec"] == first["spec"]


def test_a_spot_question_after_a_yes_no_answer_gets_the_spot_delta(advisor):
    first = advisor.respond("Apakah satu A100 80GB cukup untuk QLoRA Llama 3 70B?")
    spot = advisor.respond("kalau pakai spot?", thread_id=first["thread_id"])
    assert spot["verdict"]["answer_kind"] == "delta" and spot["spec"] == first["spec"]


def test_more_gpus_is_no_fix_for_the_users_own_cards(advisor):
    result = advisor.respond("Will QLoRA on Llama 3 70B fit on my two 4090s?")
    assert result["spec"]["gpu"] == "RTX4090" and result["spec"]["num_gpus"] == 2
    assert result["verdict"]["answer_kind"] == "yes_no"
    assert "8 GPUs" not in result["answer"] and "FSDP (≈" not in result["answer"]


# --- off-topic inside a job thread ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("job", "off_topic"),
    [
        ("QLoRA on Llama 3 70B, 100M tokens, budget $400", "What's the weather in Rome tomorrow?"),
        ("LoRA su Qwen2.5 7B, 30M token, budget 200 euro", "che tempo fa a Roma domani?"),
        ("QLoRA pada Llama 3.1 8B, 20 juta token", "siapa presiden Indonesia sekarang?"),
        ("QLoRA pada Llama 3.1 8B, 20 juta token", "cuaca di Jakarta besok?"),
    ],
)
def test_off_topic_in_a_job_thread_is_declined_without_re_running(advisor, job, off_topic):
    first = advisor.respond(job)
    result = advisor.respond(off_topic, thread_id=first["thread_id"])
    assert result["verdict"]["answer_kind"] == "declined" and result["offers"] == []
    assert result["spec"] == first["spec"] and result["spec"]["deadline_hours"] is None
    assert first["offers"][0]["provider"] not in result["answer"]


# --- preferences re-rank ---------------------------------------------------------------------------------------


def _every_plan(advisor: Advisor, spec: dict) -> list:
    """Every eligible plan of the tool's full listing, read by the test itself (not the turn's alternatives)."""
    return rank_offers(JobSpec.model_validate(spec), db_path=advisor.db_path, limit=100_000).offers


@pytest.mark.parametrize(
    ("job", "faster", "cheaper"),
    [
        ("LoRA on Mistral 7B, 50M tokens, budget $500", "faster?", "cheaper?"),
        ("Full fine-tuning di Llama 3.1 8B su 50M token, niente spot", "qualcosa di più veloce?", "più economico?"),
        ("LoRA pada Mistral 7B, 50 juta token", "yang lebih cepat?", "yang lebih murah?"),
    ],
)
def test_faster_and_cheaper_change_the_preference_and_re_rank(advisor, job, faster, cheaper):
    first = advisor.respond(job)
    plans = _every_plan(advisor, first["spec"])
    fast = advisor.respond(faster, thread_id=first["thread_id"])
    assert fast["offers"][0]["est_hours"] == pytest.approx(min(o.est_hours for o in plans))
    assert fast["offers"][0]["est_hours"] < first["offers"][0]["est_hours"]
    assert fast["changed"] == ["prefer"] and fast["spec"] == first["spec"]
    assert fast["offers"][0]["provider"] in _head(fast["answer"])
    cheap = advisor.respond(cheaper, thread_id=first["thread_id"])
    assert cheap["offers"][0]["est_cost"] == pytest.approx(min(o.est_cost for o in plans))
    assert cheap["changed"] == ["prefer"]


def test_the_preference_is_kept_for_the_next_follow_up(advisor):
    first = advisor.respond("Pretrain a 1B model on 20B tokens within 48 hours")
    advisor.respond("prefer speed", thread_id=first["thread_id"])
    later = advisor.respond("make it 8 GPUs", thread_id=first["thread_id"])
    assert later["changed"] == ["num_gpus"] and later["spec"]["num_gpus"] == 8
    plans = _every_plan(advisor, later["spec"])
    assert later["offers"][0]["est_hours"] == pytest.approx(min(o.est_hours for o in plans))


# --- spot delta, GPU-count comparison, clearing a wish ---------------------------------------------------------


@pytest.mark.parametrize(
    ("job", "question"),
    [
        ("Full fine-tune Qwen2.5 7B on 200M tokens, budget $300", "what if I use spot?"),
        ("LoRA su Llama 3.1 8B, 20M token, budget 100 euro, niente spot", "e se uso le spot?"),
        ("Full fine-tuning Qwen2.5 7B dengan 200 juta token, tanpa spot", "kalau pakai spot?"),
    ],
)
def test_spot_question_answers_the_delta_only(advisor, job, question):
    first = advisor.respond(job)
    delta = advisor.respond(question, thread_id=first["thread_id"])
    assert delta["verdict"]["answer_kind"] == "delta" and delta["changed"] == []
    assert delta["spec"] == first["spec"] and delta["act"] == "what_if"  # the job stays; the offers are spot's
    assert "on-demand" in delta["answer"] and "spot" in delta["answer"].lower()
    assert len(delta["answer"].splitlines()) <= 4 < len(first["answer"].splitlines())
    # both sides of the delta, worked out from the tool's full listing with spot allowed: the cheapest spot plan
    # and the current on-demand recommendation, each with its own cost
    spot_ok = {**first["spec"], "interruptible_ok": True}
    best_spot = min((o for o in _every_plan(advisor, spot_ok) if o.spot), key=lambda o: o.est_cost)
    language = delta["language"]
    assert not first["offers"][0]["spot"]
    assert money(best_spot.est_cost, "USD", language) in delta["answer"]
    assert best_spot.provider in delta["answer"] and first["offers"][0]["provider"] in delta["answer"]
    assert money(first["offers"][0]["est_cost"], "USD", language) in delta["answer"]


@pytest.mark.parametrize("no_spot", ["no spot please", "niente spot", "tanpa spot"])
def test_refusing_spot_is_a_change_not_a_spot_question(advisor, no_spot):
    first = advisor.respond("LoRA on Mistral 7B, 50M tokens, spot is fine")
    result = advisor.respond(no_spot, thread_id=first["thread_id"])
    assert result["changed"] == ["interruptible_ok"] and result["spec"]["interruptible_ok"] is False
    assert result["verdict"]["answer_kind"] == "recommendation" and not any(o["spot"] for o in result["offers"])


@pytest.mark.parametrize(
    ("job", "question"),
    [
        ("QLoRA on Llama 3 70B, 100M tokens", "would 4 GPUs be better?"),
        ("QLoRA su Llama 3 70B, 100M token", "meglio 4 GPU?"),
        ("QLoRA pada Llama 3 70B, 100 juta token", "lebih baik 4 GPU?"),
    ],
)
def test_a_gpu_count_question_compares_without_changing_the_job(advisor, tmp_path, job, question):
    first = advisor.respond(job)
    result = advisor.respond(question, thread_id=first["thread_id"])
    assert result["verdict"]["answer_kind"] == "compare" and result["changed"] == []
    assert result["spec"] == first["spec"]
    four = rank_offers(JobSpec.model_validate({**first["spec"], "num_gpus": 4}), db_path=advisor.db_path)
    language = result["language"]
    now = first["offers"][0]
    assert now["total_gpus"] != 4 and four.offers[0].total_gpus == 4  # a real comparison: 4 GPUs against 1
    assert "4×" in result["answer"] and f"{now['total_gpus']}×" in result["answer"]
    assert money(four.offers[0].est_cost, "USD", language) in result["answer"]
    assert money(now["est_cost"], "USD", language) in result["answer"]
    assert money(abs(four.offers[0].est_cost - now["est_cost"]), "USD", language) in result["answer"]


@pytest.mark.parametrize(
    ("job", "clear", "expected"),
    [
        ("LoRA on Llama 3.1 8B on an A100, 20M tokens", "any GPU is fine", {"gpu": None}),
        (
            "Full fine-tuning di Mistral 7B su 4 H100, 50M token",
            "va bene qualsiasi scheda, basta una GPU",
            {"gpu": None, "num_gpus": 1},
        ),
        ("LoRA pada Llama 3.1 8B di H100, 20 juta token", "GPU apa saja boleh", {"gpu": None}),
    ],
)
def test_any_gpu_clears_the_remembered_gpu(advisor, job, clear, expected):
    first = advisor.respond(job)
    assert first["spec"]["gpu"] is not None
    result = advisor.respond(clear, thread_id=first["thread_id"])
    assert {k: result["spec"][k] for k in expected} == expected
    assert set(result["changed"]) == set(expected) and result["verdict"]["answer_kind"] == "recommendation"


def test_a_follow_up_says_what_changed_and_repeats_only_that(advisor):
    first = advisor.respond("LoRA su Llama 3.1 8B, 20M token, budget 100 euro")
    result = advisor.respond("facciamo 4 GPU", thread_id=first["thread_id"])
    assert result["changed"] == ["num_gpus"]
    assert "**Cambiato:** GPU 4." in result["answer"]
    assert "Prima:" in result["answer"] or "Stessa offerta" in result["answer"]
    assert "Ipotesi" not in result["answer"] and len(result["answer"]) < len(first["answer"])


# --- answers people can read ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "LoRA on Mistral 7B, 50M tokens, budget $500, within 2 days",
        "QLoRA su Llama 3 70B, budget 300 euro, entro 3 giorni",
        "LoRA pada Qwen2.5 7B, 30 juta token, anggaran 2 juta rupiah, selesai dalam 2 hari",
    ],
)
def test_the_verdict_comes_first_and_matches_the_structured_verdict(advisor, message):
    result = advisor.respond(message)
    top, verdict, spec = result["offers"][0], result["verdict"], result["spec"]
    head = _head(result["answer"])
    language = result["language"]
    assert f"{top['total_gpus']}× {top['gpu']}" in head and top["provider"] in head
    assert money(top["est_cost"], "USD", language) in head
    assert money(spec["budget"]["amount"], spec["budget"]["currency"], language) in head
    assert number(spec["deadline_hours"], language, 0) in head
    assert verdict == verdict | {
        "answer_kind": "recommendation",
        "gpu": top["gpu"],
        "count": top["total_gpus"],
        "provider": top["provider"],
        "region": top["region"],
        "spot": top["spot"],
        "total_cost": top["est_cost"],
        "currency": "USD",
        "hours": top["est_hours"],
        "fits_budget": top["meets_budget"],
        "fits_deadline": top["meets_deadline"],
    }


@pytest.mark.parametrize(
    ("message", "words", "foreign"),
    [
        ("LoRA su Llama 3.1 8B, 20M token", ["epoche", "Ipotesi"], ["assumed", "epochs"]),
        ("LoRA pada Llama 3.1 8B, 20 juta token", ["epoch", "Asumsi"], ["assumed", "not given"]),
        ("QLoRA on Llama 3.1 8B", ["Alpaca", "epochs"], []),
    ],
)
def test_cost_driving_assumptions_are_visible_and_localised(advisor, message, words, foreign):
    answer = advisor.respond(message)["answer"]
    assert all(word in answer for word in words)
    assert not any(word in answer for word in foreign)


def test_one_consistent_story_layout_and_memory(advisor):
    result = advisor.respond("Full fine-tune Llama 3 70B on 100M tokens")
    top, answer = result["offers"][0], result["answer"]
    assert "cheapest fix" not in answer and "fix:" not in answer
    layout = (top.get("topology_params") or {}).get("layout")
    names = {"fsdp": "FSDP", "zero2": "ZeRO-2", "ddp": "DDP", "tensor_parallel": "tensor parallelism"}
    if top["total_gpus"] > 1 and layout in names:
        assert names[layout] in answer
        assert sum(name in answer for name in names.values()) == 1  # one layout, the one the numbers use
    memory = re.search(r"about ([\d.,]+) GiB per GPU", answer)
    assert memory and float(memory.group(1).replace(",", "")) <= top["vram_gib_per_gpu"]


@pytest.mark.parametrize(
    "message",
    [
        "LoRA su Llama 3.1 8B su 8 A100, 50M token",
        "QLoRA pada Llama 3 70B, 100 juta token",
        "Full fine-tune Llama 3.1 8B on 8 H100, 100M tokens",
    ],
)
def test_no_internal_paths_or_broken_punctuation_reach_users(advisor, message):
    answer = advisor.respond(message)["answer"]
    for bad in ("§", ".md", "shared/", "il 0 %", "?.", "0 % of each step", "UNSPECIFIED"):
        assert bad not in answer, bad


def test_sources_listed_are_only_those_cited(advisor):
    result = advisor.respond("QLoRA on Llama 3.1 8B, 10M tokens, no spot")
    cited = set(re.findall(r"\[(\d+)\]", result["answer"].split("Sources:")[0]))
    listed = re.findall(r"^- \[(\d+)\]", result["answer"], re.MULTILINE)
    assert set(listed) == cited and len(result["citations"]) == len(listed)


# --- big and absurd numbers ---------------------------------------------------------------------------------------


def test_a_very_big_job_gets_an_answer(advisor):
    result = advisor.respond("pretrain llama 3 8b on 15T tokens")
    assert result["spec"]["dataset_tokens"] == 15 * 10**12
    assert result["offers"] and result["offers"][0]["est_hours"] > 1000
    assert result["verdict"]["answer_kind"] == "recommendation"


def test_a_number_above_two_to_the_64_does_not_crash_a_thread(advisor):
    first = advisor.respond(f"LoRA on Llama 3.1 8B, {2**70} tokens, budget $50")
    assert first["spec"]["dataset_tokens"] is None and first["offers"]
    again = advisor.respond("make it 2 GPUs", thread_id=first["thread_id"])
    assert again["spec"]["num_gpus"] == 2 and again["spec"]["budget"] == {"amount": 50.0, "currency": "USD"}


# --- what the other tools flag reaches the text ------------------------------------------------------------------


def test_nothing_qualifies_names_the_binding_limit_with_the_rankings_numbers(advisor):
    result = advisor.respond("Full fine-tune Llama 3 70B on 10B tokens, budget $50")
    ranking = rank_offers(JobSpec.model_validate(result["spec"]), db_path=advisor.db_path)
    assert result["offers"] == [] and ranking.binding_limit == "budget"
    assert money(ranking.binding_params["min_cost_usd"], "USD", "en") in result["answer"]


@pytest.mark.parametrize("language", ["en", "it", "id"])
def test_flags_from_the_ranking_and_estimator_are_said_when_present(language):
    from agent.writing import notes as writing_notes

    ranking = {
        "headline_reason": {
            "code": "simpler_near_tie",
            "params": {
                "extra_usd": 0.73,
                "cheapest_gpus": 8,
                "headline_gpus": 2,
                "cheapest_nodes": 1,
                "headline_nodes": 1,
                "cheapest_spot": True,
                "headline_spot": False,
                "cheapest_provider": "mithril",
            },
        },
        "binding_limit": "compute",
        "binding_params": {"fastest_hours": 310.4, "fastest_gpus": 16},
    }
    why = writing_notes.headline_reason(ranking, language)
    cheapest, fewer = {
        "en": ("8× on mithril", "2 GPUs instead of 8"),
        "it": ("8× su mithril", "2 GPU invece di 8"),
        "id": ("8× di mithril", "2 GPU, bukan 8"),
    }[language]
    assert money(0.73, "USD", language) in why and cheapest in why and fewer in why
    assert number(310.4, language, 0) in writing_notes.binding_limit(ranking, language)
    assert (
        len(
            writing_notes.price_notes(
                {"provider": "vast", "spot": False, "price_outlier": "price_below_peers", "on_demand_is_market": True},
                language,
            )
        )
        == 2
    )
    state = {"spec": {"params_b": None}, "estimate": {"unknown_model": "Qwen4-9B", "total_params": 9_100_000_000}}
    assert "Qwen4-9B" in writing_notes.unknown_model(state, language)
    assert number(9.1, language, 1) in writing_notes.unknown_model(state, language)
    assert writing_notes.headline_reason({}, language) is None and writing_notes.binding_limit({}, language) is None
    assert (
        writing_notes.overheads({"overhead_hours": {"instance_start": 0.1, "downloads": 0.0}}, language).count("6") == 1
    )


def test_answer_templates_say_the_same_things_in_the_three_languages():
    import string

    from agent.writing.format import templates

    def fields(value):
        if isinstance(value, dict):
            return {key: fields(item) for key, item in value.items()}
        return {name for _, name, _, _ in string.Formatter().parse(value) if name} if isinstance(value, str) else None

    english = fields(templates("en"))
    for language in ("it", "id"):
        assert fields(templates(language)) == english, language


@pytest.mark.parametrize(
    ("message", "name", "words"),
    [
        ("LoRA on Qwen4-9B, 20M tokens", "Qwen4-9B", ["I don't know Qwen4-9B", "9.0 B", "config.json"]),
        ("LoRA su Sailor-7B, 20M token", "Sailor-7B", ["Non conosco Sailor-7B", "7,0 B", "config.json"]),
        ("LoRA pada Komodo 7B, 20 juta token", "Komodo 7B", ["tidak mengenal Komodo 7B", "7,0 B", "config.json"]),
    ],
)
def test_an_unknown_model_is_named_and_the_generic_stand_in_said(advisor, message, name, words):
    result = advisor.respond(message)
    assert result["spec"]["model"] is None and result["offers"]
    assert all(word in result["answer"] for word in words)
    follow = advisor.respond("make it 2 GPUs", thread_id=result["thread_id"])
    assert "num_gpus" in follow["changed"]
    known = advisor.respond("switch to Llama 3.1 8B", thread_id=result["thread_id"])
    assert name not in known["answer"] and "llama-3.1-8b" in known["answer"]
