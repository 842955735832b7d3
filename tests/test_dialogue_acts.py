"""Every dialogue act through the real graph, in it, id and en: what the act does to the job, and what the answer
names. Expected values come from the turn's own inputs (the job before, the GPU or currency asked about) and from
the tools' raw output (the fx table, the ranking), never from the act layer's own text."""

from __future__ import annotations

import re

import pytest

from agent.service import Advisor
from tools.fx import load_fx

JOBS = {
    "en": "QLoRA on Llama 3 70B, 100M tokens, budget $400",
    "it": "QLoRA su Llama 3 70B, 100M token, budget 400 euro",
    "id": "QLoRA pada Llama 3 70B, 100 juta token, budget Rp 6.000.000",
}


def _job(advisor: Advisor, language: str) -> dict:
    """A fresh thread with the language's job answered."""
    first = advisor.respond(JOBS[language])
    assert first["act"] == "new_job" and first["offers"], first["answer"]
    return first


PLAN_QUESTIONS = [
    ("en", "why 2 GPUs?", "question"),
    ("it", "perché 2 GPU?", "question"),
    ("id", "kenapa 2 GPU?", "question"),
    ("en", "which region?", "question"),
    ("it", "in che regione?", "question"),
    ("id", "region mana?", "question"),
    ("en", "is PCIe enough for this?", "question"),
    ("it", "basta PCIe per questo?", "question"),
    ("id", "cukup pakai PCIe?", "question"),
    ("en", "does it fit on a 4090?", "what_if"),
    ("it", "ci sta su una 4090?", "what_if"),
    ("id", "muat di 4090?", "what_if"),
    ("en", "what if I drop to 4k context?", "what_if"),
    ("it", "e se scendo a 4k di contesto?", "what_if"),
    ("id", "kalau seq len 4096?", "what_if"),
]


@pytest.mark.parametrize(("language", "message", "act"), PLAN_QUESTIONS)
def test_questions_and_what_ifs_leave_the_job_alone(advisor, language, message, act):
    first = _job(advisor, language)
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["act"] == act
    assert result["spec"] == first["spec"] and result["changed"] == []
    assert result["language"] == language
    if "4090" in message:
        assert "RTX4090" in result["answer"]
        assert re.match(r"\*\*(No|Tidak)\*\*", result["answer"])  # 70B QLoRA needs more than one 24 GB card


@pytest.mark.parametrize(
    ("language", "message", "code"),
    [
        ("en", "how much is that in rupiah?", "IDR"),
        ("it", "quanto fa in rupie?", "IDR"),
        ("id", "berapa kalau dalam euro?", "EUR"),
    ],
)
def test_the_total_in_another_currency_uses_the_dated_rate(advisor, language, message, code):
    first = _job(advisor, language)
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["act"] == "question" and result["spec"] == first["spec"]
    table = load_fx()
    rates = {table.base: 1.0, **table.rates}
    expected = first["offers"][0]["est_cost"] * rates[code] / rates["USD"]
    digits = re.sub(r"\D", "", f"{round(expected):,}") if code == "IDR" else None
    assert table.date in result["answer"]
    if digits:
        assert digits in re.sub(r"\D", "", result["answer"])


@pytest.mark.parametrize(
    ("language", "message"),
    [
        ("en", "H100 or A100-80GB for this?"),
        ("it", "meglio una H100 o una A100-80GB per questo?"),
        ("id", "H100 atau A100-80GB untuk ini?"),
    ],
)
def test_a_comparison_names_both_gpus_and_changes_nothing(advisor, language, message):
    first = _job(advisor, language)
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["act"] == "question" and result["spec"] == first["spec"]
    assert "H100" in result["answer"] and "A100-80GB" in result["answer"]


@pytest.mark.parametrize(
    ("language", "change", "back"),
    [
        ("en", "make it 8 GPUs", "undo"),
        ("it", "facciamo 8 GPU", "torna a prima"),
        ("id", "ganti jadi 8 GPU", "kembali ke sebelumnya"),
    ],
)
def test_a_change_says_what_changed_and_undo_restores_the_plan(advisor, language, change, back):
    first = _job(advisor, language)
    changed = advisor.respond(change, thread_id=first["thread_id"])
    assert changed["act"] == "change" and changed["changed"] == ["num_gpus"] and changed["spec"]["num_gpus"] == 8
    restored = advisor.respond(back, thread_id=first["thread_id"])
    assert restored["act"] == "undo" and restored["spec"] == first["spec"]
    assert restored["offers"][0]["est_cost"] == pytest.approx(first["offers"][0]["est_cost"])


@pytest.mark.parametrize(
    ("language", "what_if", "adopt"),
    [
        ("en", "what if I use spot?", "ok, do that"),
        ("it", "e se uso le spot?", "ok, fallo"),
        ("id", "kalau pakai spot?", "oke, pakai itu"),
    ],
)
def test_a_what_if_is_adopted_only_when_the_user_says_so(advisor, language, what_if, adopt):
    first = _job(advisor, language)
    asked = advisor.respond(what_if, thread_id=first["thread_id"])
    assert asked["act"] == "what_if" and asked["spec"] == first["spec"]
    adopted = advisor.respond(adopt, thread_id=first["thread_id"])
    assert adopted["act"] == "change" and adopted["spec"]["interruptible_ok"] is True
    assert adopted["changed"] == ["interruptible_ok"]


@pytest.mark.parametrize(
    ("language", "message"),
    [
        ("en", "what's the largest model I can fine-tune with LoRA on one 24 GB card?"),
        ("it", "qual è il modello più grande che posso addestrare con LoRA su una scheda da 24 GB?"),
        ("id", "model paling besar yang bisa di-LoRA di kartu 24 GB apa?"),
    ],
)
def test_an_inverse_question_names_a_model_that_fits(advisor, language, message):
    from contract.jobspec import JobSpec
    from tools.memory.estimator import estimate_for_spec
    from tools.models.registry import all_models

    result = advisor.respond(message)
    assert result["act"] == "inverse" and not result["spec"]
    named = [m for m in all_models() if m.name in result["answer"]]
    assert named, result["answer"]
    estimate = estimate_for_spec(
        JobSpec(language=language, model=named[0].id, method="lora"), num_gpus=1, vram_gib=24e9 / 2**30
    )
    assert estimate.per_gpu_gib <= 24e9 / 2**30  # the model named really fits the card


@pytest.mark.parametrize(
    ("language", "message"),
    [
        ("en", "what's the weather in Rome tomorrow?"),
        ("it", "che tempo fa a Roma domani?"),
        ("id", "cuaca di Jakarta besok?"),
    ],
)
def test_off_topic_is_declined_and_the_job_kept(advisor, language, message):
    first = _job(advisor, language)
    result = advisor.respond(message, thread_id=first["thread_id"])
    assert result["act"] == "declined" and result["spec"] == first["spec"] and result["offers"] == []


@pytest.mark.parametrize(
    ("language", "message"),
    [
        ("en", "i have a 3090 at home but want cloud: QLoRA Qwen2.5 7B, 10k examples"),
        ("it", "ho una 3090 a casa ma voglio il cloud: QLoRA Qwen2.5 7B, 10k esempi"),
        ("id", "aku punya 3090 di rumah tapi mau sewa: QLoRA Qwen2.5 7B, 10rb contoh"),
    ],
)
def test_ones_own_card_elsewhere_is_no_constraint(advisor, language, message):
    result = advisor.respond(message)
    assert result["act"] == "new_job" and result["spec"]["gpu"] is None


@pytest.mark.parametrize(
    ("language", "message"),
    [("en", "LoRA on Mistral 7B, 20M tokens"), ("it", "Mistral 7B, 20M token"), ("id", "Mistral 7B, 20 juta token")],
)
def test_a_job_without_a_method_gets_the_default_and_the_other_methods(advisor, language, message):
    result = advisor.respond(message)
    assert result["act"] == "new_job" and result["offers"]
    if "LoRA" not in message:
        assert result["spec"]["method"] == "full_finetune" and "QLoRA" in result["answer"]


@pytest.mark.parametrize(
    ("language", "message", "asked"),
    [
        ("en", "LoRA on Mistrall 7B, 20M tokens", "Did you mean Mistral 7B?"),
        ("it", "LoRA su Mistrall 7B, 20M token", "Intendevi Mistral 7B?"),
        ("id", "LoRA pada Mistrall 7B, 20 juta token", "Maksud Anda Mistral 7B?"),
    ],
)
def test_a_misspelt_model_is_asked_about_in_the_same_turn(advisor, language, message, asked):
    result = advisor.respond(message)
    assert result["spec"]["model"] == "mistral-7b" and result["answer"].startswith(asked)
    exact = advisor.respond(message.replace("Mistrall", "Mistral"))
    assert asked not in exact["answer"]


def test_the_smallest_gpu_is_found_for_a_job_sized_by_parameters_alone(advisor):
    from contract.jobspec import JobSpec
    from tools.memory.estimator import estimate_for_spec

    first = advisor.respond("LoRA on a 7B model, 20M tokens")
    assert first["spec"]["model"] is None and first["spec"]["params_b"] == 7
    result = advisor.respond("what's the smallest GPU for this job?", thread_id=first["thread_id"])
    assert result["act"] == "inverse" and result["spec"] == first["spec"]
    named = result["verdict"]["gpu"]
    assert named, result["answer"]
    estimate = estimate_for_spec(JobSpec.model_validate(first["spec"]), num_gpus=1, gpu=named)
    assert estimate.fit is not None and estimate.per_gpu_gib <= 0.95 * estimate.fit.vram_gib


@pytest.mark.parametrize(
    ("language", "job", "what_if"),
    [
        ("en", "Full fine-tune Llama 3.1 8B on 500M tokens within 24 hours, no spot", "what if we drop the deadline?"),
        (
            "it",
            "full fine-tuning di Llama 3.1 8B su 500M token, entro 24 ore, niente spot",
            "e se togliamo la scadenza?",
        ),
        (
            "id",
            "full fine-tune Llama 3.1 8B, 500 juta token, deadline 24 jam, tanpa spot",
            "kalau tanpa deadline gimana?",
        ),
    ],
)
def test_a_what_if_that_clears_a_limit_compares_without_it_and_keeps_the_job(advisor, language, job, what_if):
    first = advisor.respond(job)
    assert first["spec"]["deadline_hours"] == 24
    asked = advisor.respond(what_if, thread_id=first["thread_id"])
    assert asked["act"] == "what_if" and asked["spec"] == first["spec"]
    adopted = advisor.respond(
        {"en": "ok, do that", "it": "ok, fallo", "id": "oke, pakai itu"}[language], thread_id=first["thread_id"]
    )
    assert adopted["spec"]["deadline_hours"] is None and adopted["changed"] == ["deadline_hours"]


def test_is_pcie_enough_on_an_nvlink_plan_gives_the_pcie_figure(advisor):
    """A plan on NVLink GPUs and no PCIe offer of the same count in the list: the answer still says what PCIe would
    cost, with the topology check's own figure for the same GPUs over PCIe (ask the tool, compare the percent)."""
    from contract.jobspec import JobSpec
    from tools.jobtime.topology import Candidate, build_workload, check_topology

    first = advisor.respond("pretrain a 3B model from scratch on 60B tokens on 16 H100 GPUs in 2 nodes")
    top = first["offers"][0]
    assert top["total_gpus"] == 16 and "nvlink" in str(top["topology_params"].get("link")).lower()
    answer = advisor.respond("is PCIe enough for this?", thread_id=first["thread_id"])["answer"]
    pcie = check_topology(
        build_workload(JobSpec.model_validate(first["spec"])),
        Candidate(
            gpu="H100",
            gpu_count=16,
            gpus_per_node=8,
            interconnect="pcie",
            inter_node_gbps=top["topology_params"].get("inter_node_gbps"),
            vram_gib=top["vram_gib_per_gpu"],
        ),
    )
    share = pcie.params["exposed_comm_share"]
    assert "PCIe" in answer and f"{100 * share:.0f} %" in answer, (answer, share)


@pytest.mark.parametrize(
    ("language", "job", "what_if"),
    [
        ("en", "QLoRA on Llama 3 70B, 100M tokens, budget $400, spot ok", "what if I use spot?"),
        ("it", "QLoRA su Llama 3 70B, 100M token, budget 400 euro, vanno bene le spot", "e se uso le spot?"),
        ("id", "QLoRA pada Llama 3 70B, 100 juta token, boleh spot", "kalau pakai spot?"),
    ],
)
def test_a_what_if_the_job_already_has_says_so_and_offers_no_switch(advisor, language, job, what_if):
    """Asking for what the job already has (spot, when spot is allowed) names the plan as it is: no empty change
    ("With -:"), no "now" line repeating the same plan, no offer to switch to it."""
    first = advisor.respond(job)
    assert first["spec"]["interruptible_ok"] is True and first["offers"]
    asked = advisor.respond(what_if, thread_id=first["thread_id"])
    assert asked["act"] == "what_if" and asked["spec"] == first["spec"]
    answer = asked["answer"]
    assert not re.search(r"(^|\s)-:", answer), answer
    assert first["offers"][0]["provider"] in answer, answer
    assert answer.count(first["offers"][0]["provider"]) == 1, answer  # the plan named once, not "with" and "now"
    switch = {"en": "ok, do that", "it": "ok, fallo", "id": "oke, pakai itu"}[language]
    assert switch not in answer, answer


@pytest.mark.parametrize(("language", "adopt"), [("en", "ok, do that"), ("it", "ok, fallo"), ("id", "oke, pakai itu")])
def test_adopting_with_no_proposal_says_so_and_keeps_the_job(advisor, language, adopt):
    """ "Ok, do that" with no what-if waiting (the turn before answered a question): the job stays as it is and the
    answer says there is nothing to adopt, instead of declining the message as off-topic."""
    first = _job(advisor, language)
    advisor.respond(
        {"en": "why 2 GPUs?", "it": "perché 2 GPU?", "id": "kenapa 2 GPU?"}[language], thread_id=first["thread_id"]
    )
    adopted = advisor.respond(adopt, thread_id=first["thread_id"])
    assert adopted["intent"] != "out_of_scope", adopted["answer"]
    assert adopted["spec"] == first["spec"] and adopted["changed"] == []
    assert adopted["offers"] and adopted["offers"][0]["provider"] in adopted["answer"], adopted["answer"]


@pytest.mark.parametrize(
    ("language", "faster", "back"),
    [
        ("en", "the fastest one first, please", "undo"),
        ("it", "preferisco la più veloce", "torna a prima"),
        ("id", "yang lebih cepat?", "kembali ke sebelumnya"),
    ],
)
def test_undo_after_asking_for_the_fastest_brings_the_cheapest_first_back(advisor, language, faster, back):
    """A preference switch is a change the answer reports ("Changed: fastest offer first", with the plan before):
    undo returns to that plan, cheapest first again, and says so; a second undo has nothing left to undo."""
    first = _job(advisor, language)
    fast = advisor.respond(faster, thread_id=first["thread_id"])
    assert fast["changed"] == ["prefer"] and fast["spec"] == first["spec"]
    lead, fast_lead = first["offers"][0], fast["offers"][0]
    assert fast_lead["est_hours"] < lead["est_hours"], "the fastest-first answer leads with another offer"
    restored = advisor.respond(back, thread_id=first["thread_id"])
    assert restored["act"] == "undo" and restored["spec"] == first["spec"] and restored["changed"] == ["prefer"]
    again = restored["offers"][0]
    assert (again["provider"], again["instance_type"], again["est_cost"]) == (
        lead["provider"],
        lead["instance_type"],
        pytest.approx(lead["est_cost"]),
    )
    nothing = advisor.respond(back, thread_id=first["thread_id"])
    assert nothing["act"] == "undo" and nothing["offers"][0]["est_cost"] == pytest.approx(lead["est_cost"])
    assert nothing["changed"] == []


@pytest.mark.parametrize(
    ("language", "job", "question"),
    [
        ("en", "LoRA on Llama 3.1 8B, 10k examples, budget $50", "why not A100?"),
        ("it", "LoRA su Llama 3.1 8B, 10k esempi, budget 50 dollari", "perché non A100?"),
        ("id", "LoRA pada Llama 3.1 8B, 10 ribu contoh, budget 50 dolar", "kenapa tidak A100?"),
    ],
)
def test_why_not_names_the_cheaper_listed_offer_it_does_not_count(advisor, language, job, question):
    """When the asked GPU's own ranking leads with a dearer plan because its cheapest price is unverified (the user
    sees that cheaper offer in the list), the why-not answer says so, naming its provider, not only the dearer
    plan it compares."""
    from contract.jobspec import JobSpec
    from tools.ranking import rank_offers

    first = advisor.respond(job)
    spec = JobSpec.model_validate({**first["spec"], "gpu": "A100"})
    reason = rank_offers(spec).headline_reason
    assert reason is not None and reason.code == "cheaper_price_unverified", "the catalog still has such an A100"
    listed = [
        o
        for o in first["offers"]
        if o["gpu"].startswith("A100") and o["provider"] == reason.params["cheapest_provider"]
    ]
    assert listed, "the cheaper A100 is in the user's list"
    answer = advisor.respond(question, thread_id=first["thread_id"])
    assert answer["act"] == "question" and answer["spec"] == first["spec"]
    assert reason.params["cheapest_provider"] in answer["answer"]


@pytest.mark.parametrize(
    ("language", "job", "cheapest"),
    [
        ("en", "Full fine-tune Llama 3.1 8B on 500M tokens within 10 hours, budget $300", "the cheapest?"),
        (
            "it",
            "Fine-tuning completo di Llama 3.1 8B su 500M token entro 10 ore, budget 300 dollari",
            "la più economica?",
        ),
        (
            "id",
            "Fine-tune penuh Llama 3.1 8B, 500 juta token, selesai dalam 10 jam, budget 300 dolar",
            "yang paling murah?",
        ),
    ],
)
def test_a_follow_up_that_leads_with_an_unverified_price_says_to_check_it(advisor, language, job, cheapest):
    """Asking for the cheapest puts first a plan whose price the tools flag as an outlier (the first answer kept it
    out of first place and said why): the follow-up's answer says to check that price, as a first answer does."""
    from agent.writing import templates

    first = advisor.respond(job)
    assert not first["offers"][0].get("price_outlier")
    answer = advisor.respond(cheapest, thread_id=first["thread_id"])
    assert answer["changed"] == ["prefer"] and answer["offers"][0].get("price_outlier"), "the cheapest is flagged"
    assert templates(language)["price_outlier_note"] in answer["answer"]


@pytest.mark.parametrize(
    ("language", "why_not", "adopt"),
    [
        ("en", "why not A100?", "ok, do that"),
        ("it", "perché non A100?", "ok, fallo"),
        ("id", "kenapa tidak A100?", "oke, pakai itu"),
    ],
)
def test_the_option_a_why_not_answer_names_can_be_adopted(advisor, language, why_not, adopt):
    """A why-not answer that names another plan offers it as a what-if does ("say 'ok, do that' to switch"), and
    adopting it changes the job to that GPU; the job is untouched until then."""
    first = _job(advisor, language)
    asked = advisor.respond(why_not, thread_id=first["thread_id"])
    assert asked["act"] == "question" and asked["spec"] == first["spec"]
    adopted = advisor.respond(adopt, thread_id=first["thread_id"])
    assert adopted["act"] == "change" and adopted["changed"] == ["gpu"] and adopted["spec"]["gpu"] == "A100"
    assert adopted["offers"][0]["gpu"].startswith("A100")


@pytest.mark.parametrize(("language", "adopt"), [("en", "ok do that"), ("it", "ok fallo"), ("id", "oke pakai itu")])
def test_adopting_with_nothing_offered_is_read_as_adopting_in_every_language(advisor, language, adopt):
    """ "ok do that" with no option waiting is the same act in every language (nothing to adopt; the job as it is),
    not a question about the plan because "do" can open an English question."""
    first = _job(advisor, language)
    answer = advisor.respond(adopt, thread_id=first["thread_id"])
    assert answer["act"] == "change" and answer["spec"] == first["spec"] and answer["changed"] == []


@pytest.mark.parametrize(
    ("language", "job", "question"),
    [
        ("en", "Can I fine-tune Llama 3.1 8B on a single 4090?", "what about with QLoRA?"),
        ("it", "Posso fare fine-tuning di Llama 3.1 8B su una sola 4090?", "perché non QLoRA?"),
        ("id", "Bisa fine-tune Llama 3.1 8B di satu 4090?", "kenapa tidak QLoRA?"),
    ],
)
def test_why_not_another_method_when_the_job_has_no_plan_answers_the_what_if(advisor, language, job, question):
    """When the thread's job has no plan to compare with (full fine-tuning does not fit the one 4090 asked about),
    "why not / what about QLoRA?" is answered as the what-if it is: QLoRA fits that card (the estimator's figure),
    with its rental and an offer to switch, not with the job's own "no offer" answer again."""
    from contract.jobspec import JobSpec
    from tools.gpus import lookup_gpu
    from tools.memory import estimate_for_spec

    first = advisor.respond(job)
    assert first["spec"]["gpu"] == "RTX4090" and first["spec"]["num_gpus"] == 1
    qlora = estimate_for_spec(JobSpec.model_validate({**first["spec"], "method": "qlora"}))
    assert qlora.per_gpu_gib <= lookup_gpu("RTX4090").memory_gib, "QLoRA fits the card"
    answer = advisor.respond(question, thread_id=first["thread_id"])
    assert answer["spec"] == first["spec"]
    assert answer["verdict"]["gpu"] == "RTX4090" and answer["verdict"]["count"] == 1, answer["answer"]
    adopt = {"en": "ok, do that", "it": "ok, fallo", "id": "oke, pakai itu"}[language]
    adopted = advisor.respond(adopt, thread_id=first["thread_id"])
    assert adopted["spec"]["method"] == "qlora" and adopted["offers"][0]["gpu"] == "RTX4090"


@pytest.mark.parametrize(
    ("language", "job", "why_not", "adopt"),
    [
        ("en", "QLoRA on Llama 3 70B, 100M tokens, no spot", "why not spot?", "ok, do that"),
        ("it", "QLoRA su Llama 3 70B, 100M token, niente spot", "perché non le spot?", "ok, fallo"),
        ("id", "QLoRA pada Llama 3 70B, 100 juta token, tanpa spot", "kenapa tidak pakai spot?", "oke, pakai itu"),
    ],
)
def test_why_not_spot_after_refusing_it_answers_what_spot_would_do(advisor, language, job, why_not, adopt):
    """ "Why not spot?" asks about spot (its "not" belongs to the question): the answer is what allowing spot would
    do, a spot plan (as "what if I use spot?" answers), not a contradiction; adopting it allows spot."""
    first = advisor.respond(job)
    assert first["spec"]["interruptible_ok"] is False and not first["offers"][0]["spot"]
    asked = advisor.respond(why_not, thread_id=first["thread_id"])
    assert asked["spec"] == first["spec"] and asked["verdict"]["spot"] is True, asked["answer"]
    adopted = advisor.respond(adopt, thread_id=first["thread_id"])
    assert adopted["spec"]["interruptible_ok"] is True and adopted["changed"] == ["interruptible_ok"]


@pytest.mark.parametrize(
    ("language", "job", "question"),
    [
        ("en", "pretrain Llama 3 70B on 1T tokens, budget $1000", "what is the minimum budget?"),
        ("it", "pretraining di Llama 3 70B su 1T token, budget 1000 dollari", "qual è il budget minimo?"),
        ("id", "pretrain Llama 3 70B dengan 1T token, budget 1000 dolar", "berapa budget minimal?"),
    ],
)
def test_asking_what_budget_the_job_needs_is_a_cost_question(advisor, language, job, question):
    """A question about the budget the job needs is about its cost (on topic, never declined): with no plan within
    the budget it answers with the cheapest plan's cost, the ranking's binding figure."""
    from agent.writing import money

    first = advisor.respond(job)
    assert first["binding_limit"] == "budget" and not first["offers"]
    answer = advisor.respond(question, thread_id=first["thread_id"])
    job_fields = {k: v for k, v in first["spec"].items() if k != "language"}
    assert answer["act"] == "question", answer["answer"]
    assert {k: v for k, v in answer["spec"].items() if k != "language"} == job_fields
    assert money(first["binding_params"]["min_cost_usd"], "USD", answer["language"]) in answer["answer"]


@pytest.mark.parametrize(
    ("language", "job", "what_if"),
    [
        ("en", "QLoRA on Llama 3 70B, 100M tokens", "what if I use an A100?"),
        ("it", "QLoRA su Llama 3 70B, 100M token", "e se uso una A100?"),
        ("id", "QLoRA pada Llama 3 70B, 100 juta token", "kalau pakai A100?"),
    ],
)
def test_a_fit_answer_says_to_check_the_price_of_the_card_it_names(advisor, language, job, what_if):
    """A what-if on another card answers whether the job fits it and names a rental of that card; the answer says
    to check that rental's price exactly when the tools flag it as an outlier (as a recommendation does), here the
    auction price of the single A100-80GB most of these answers name."""
    from agent.writing import templates
    from contract.jobspec import JobSpec
    from tools.ranking import rank_offers

    first = advisor.respond(job)
    answer = advisor.respond(what_if, thread_id=first["thread_id"])
    named = answer["verdict"]
    assert answer["act"] == "what_if" and named["gpu"] == "A100-80GB" and named["count"] == 1, answer["answer"]
    alone = {"gpu": "A100-80GB", "num_gpus": 1, "providers": [named["provider"]]}
    offers = rank_offers(JobSpec.model_validate({**first["spec"], **alone})).offers
    flagged = next(o for o in offers if o.instance_type == named["instance"]).price_outlier
    assert (templates(language)["price_outlier_note"] in answer["answer"]) == bool(flagged)


def test_the_fit_answers_above_name_a_flagged_price_somewhere(advisor):
    """The check above is not vacuous: the English answer names the flagged auction price."""
    first = advisor.respond("QLoRA on Llama 3 70B, 100M tokens")
    answer = advisor.respond("what if I use an A100?", thread_id=first["thread_id"])
    assert answer["verdict"]["provider"] == "mithril"


@pytest.mark.parametrize(
    ("language", "job", "ask", "adopt"),
    [
        ("en", "LoRA on Gemma 2 9B, 30k examples, within 6 hours", "and without the deadline?", "ok, do that"),
        ("it", "LoRA su Gemma 2 9B, 30k esempi, entro 6 ore", "e senza la scadenza?", "ok, fallo"),
        (
            "id",
            "LoRA pada Gemma 2 9B, 30 ribu contoh, selesai dalam 6 jam",
            "kalau tanpa batas waktu?",
            "oke, pakai itu",
        ),
    ],
)
def test_without_the_deadline_is_a_what_if_that_clears_it(advisor, language, job, ask, adopt):
    """ "And without the deadline?" (with its article) asks about the job with the deadline cleared, as "no
    deadline" clears it: the job untouched until adopted, then without a deadline."""
    first = advisor.respond(job)
    assert first["spec"]["deadline_hours"] == 6
    asked = advisor.respond(ask, thread_id=first["thread_id"])
    assert asked["act"] == "what_if" and asked["spec"] == first["spec"], asked["answer"]
    adopted = advisor.respond(adopt, thread_id=first["thread_id"])
    assert adopted["spec"]["deadline_hours"] is None and adopted["changed"] == ["deadline_hours"]


@pytest.mark.parametrize(
    ("language", "ask"),
    [("en", "how much is that in dollars?"), ("it", "quanto fa in dollari?"), ("id", "berapa dalam dolar?")],
)
def test_the_total_in_dollars_is_said_without_converting_dollars(advisor, language, ask):
    """Prices are in US dollars: asked for the total in dollars, the answer gives it with no exchange rate (no
    "1.0000 USD per USD")."""
    from agent.writing import money

    first = _job(advisor, language)
    answer = advisor.respond(ask, thread_id=first["thread_id"])
    assert answer["act"] == "question" and money(first["offers"][0]["est_cost"], "USD", language) in answer["answer"]
    assert (
        "USD per USD" not in answer["answer"] and "1,0000" not in answer["answer"] and "1.0000" not in answer["answer"]
    )


@pytest.mark.parametrize(
    ("language", "what_if", "within"),
    [
        ("en", "what if we had 2 days?", "can it be done in 12 hours?"),
        ("it", "e se avessimo 2 giorni?", "si riesce in 12 ore?"),
        ("id", "kalau 2 hari gimana?", "bisa selesai dalam 12 jam?"),
    ],
)
def test_a_deadline_supposed_is_a_what_if_and_one_asked_is_a_yes_no(advisor, language, what_if, within):
    """A deadline with a hypothetical cue asks about the job with that deadline (a what-if to adopt); asked plainly
    ("can it be done in 12 hours?") it is a yes/no about the plan. Neither changes the job."""
    first = _job(advisor, language)
    supposed = advisor.respond(what_if, thread_id=first["thread_id"])
    assert supposed["act"] == "what_if" and supposed["spec"] == first["spec"], supposed["answer"]
    asked = advisor.respond(within, thread_id=first["thread_id"])
    assert asked["act"] == "question" and asked["spec"] == first["spec"], asked["answer"]
