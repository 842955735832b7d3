"""Caps on the hardware a job may use (a class seen in the tune half of the where-and-on-what blind set; sentences
written for this test, in it/id/en): "at most 4 GPUs" is a cap, not a 4-GPU wish (it had set num_gpus, so no plan
on fewer GPUs was looked at), and "one machine only, no multi-node" had no field at all. The plan keeps within both,
the answer says so, offers beyond them are counted as excluded, and lifting a cap removes it."""

from __future__ import annotations

import pytest

from agent.parsing import parse_message
from contract.jobspec import JobSpec
from tools.ranking import rank_offers

HEAVY = {"model": "llama-3.1-8b", "method": "full_finetune", "dataset_tokens": 300_000_000, "deadline_hours": 12}


@pytest.mark.parametrize(
    ("text", "caps"),
    [
        ("we can use at most 4 GPUs", {"max_gpus": 4, "num_gpus": None}),
        ("al massimo 2 GPU, non di più", {"max_gpus": 2, "num_gpus": None}),
        ("maksimal 8 GPU ya", {"max_gpus": 8, "num_gpus": None}),
        ("it has to run on one machine only", {"max_nodes": 1}),
        ("il codice non regge il multi-nodo: niente multi-nodo", {"max_nodes": 1}),
        ("tolong jangan multi-node, hanya 1 server", {"max_nodes": 1}),
        ("and with 4 GPUs?", {"num_gpus": 4, "max_gpus": None}),
    ],
)
def test_caps_are_read_as_caps(text, caps):
    spec = parse_message(text, use_llm=False).spec
    assert {name: getattr(spec, name) for name in caps} == caps


@pytest.mark.parametrize("caps", [{"max_gpus": 4}, {"max_nodes": 1}, {"max_gpus": 2, "max_nodes": 1}])
def test_every_plan_keeps_within_the_caps(caps):
    free = rank_offers(JobSpec(language="en", **HEAVY), limit=50)
    capped = rank_offers(JobSpec(language="en", **HEAVY, **caps), limit=50)
    assert capped.offers, capped.binding_limit
    for offer in capped.offers:
        assert offer.total_gpus <= caps.get("max_gpus", offer.total_gpus)
        assert offer.nodes <= caps.get("max_nodes", offer.nodes)
    assert capped.offers[0].est_cost >= min(o.est_cost for o in free.offers if o.meets_budget is not False) - 1e-9
    beyond = [
        o for o in free.offers if o.total_gpus > caps.get("max_gpus", 10**6) or o.nodes > caps.get("max_nodes", 10**6)
    ]
    if beyond:
        assert capped.excluded.get("over_gpu_cap", 0) > 0


def test_the_answer_keeps_the_caps_and_a_lifted_cap_is_removed(advisor):
    first = advisor.respond(
        "Company rule: at most 4 GPUs and one machine only. Full fine-tune of Llama 3.1 8B on 300M tokens within 12 hours."
    )
    assert first["spec"]["max_gpus"] == 4 and first["spec"]["max_nodes"] == 1, first["answer"]
    assert first["offers"][0]["total_gpus"] <= 4 and first["offers"][0]["nodes"] == 1
    assert "at most 4 gpus" in first["answer"].lower() and "one machine" in first["answer"], first["answer"]
    lifted = advisor.respond("you can forget the GPU cap now", thread_id=first["thread_id"])
    assert lifted["act"] == "change" and lifted["spec"]["max_gpus"] is None, lifted["answer"]
    assert lifted["spec"]["max_nodes"] == 1
