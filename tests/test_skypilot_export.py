"""Recommendations exported as SkyPilot tasks, validated by SkyPilot itself against its own catalog (offline)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agent.export.skypilot import SKYPILOT_CLOUDS, ExportError, SkyPilotTask, build_task
from agent.service import Advisor
from cli.app import main
from tests.shared_data import shared_path

VALIDATOR = r"""
import json, sys
import sky, sky.catalog as catalog
out = []
for item in json.load(open(sys.argv[1])):
    # the values the launch command's --env flags give (as `sky jobs launch task.yaml --env DATASET=...` does)
    task = sky.Task.from_yaml_config(item["config"], env_overrides=[(k, "x") for k in item["required_env"]])
    (res,) = list(task.resources)
    cloud = str(res.cloud).lower()
    exists = catalog.instance_type_exists(res.instance_type, clouds=cloud)
    accs = catalog.get_accelerators_from_instance_type(res.instance_type, clouds=cloud)
    regions = [r.name for r in catalog.get_region_zones_for_instance_type(res.instance_type, res.use_spot,
                                                                          clouds=cloud)]
    out.append({"cloud": cloud, "instance_type": res.instance_type, "exists": exists, "accelerators": accs,
                "task_accelerators": res.accelerators, "region": res.region, "regions": regions,
                "use_spot": res.use_spot, "num_nodes": task.num_nodes, "disk_size": res.disk_size,
                "recovery": (res.job_recovery or {}).get("strategy") if isinstance(res.job_recovery, dict)
                else res.job_recovery})
print(json.dumps(out))
"""

JOBS = [
    ("LoRA on Llama 3 8B, 10k examples, on {p}, spot is fine", "en"),
    ("QLoRA su Llama 3 70B, 20k esempi, su {p}, niente spot", "it"),
    ("full fine-tune Llama 3 8B pada {p}, 5k contoh, boleh spot", "id"),
]


@pytest.fixture(scope="module")
def results(advisor):
    """Real turn results for every provider in the catalog, spot allowed and not, several methods and languages."""
    import sqlite3

    with sqlite3.connect(advisor.db_path) as conn:
        providers = sorted(row[0] for row in conn.execute("SELECT DISTINCT provider FROM offers"))
    turns = []
    for index, provider in enumerate(providers):
        for job, _language in (JOBS[index % 3], JOBS[(index + 1) % 3]):
            turns.append(advisor.respond(job.format(p=provider)))
    turns.append(advisor.respond("pretrain a 7B model on 300B tokens in 10 days on aws, spot ok"))
    turns.append(advisor.respond("LoRA on Llama 3 70B with 16 GPUs on aws, 100k examples, no spot"))
    return [t for t in turns if t["offers"]]


def _validate_with_skypilot(tasks: list[SkyPilotTask], tmp_path: Path) -> list[dict]:
    """Run SkyPilot's parser and catalog checks in a child process whose catalog is the shared v7 snapshot."""
    runtime = tmp_path / "sky-runtime"
    for source in shared_path("data", "skypilot-catalog-v7").glob("*.csv"):
        target = runtime / ".sky" / "catalogs" / "v8" / source.stem / "vms.csv"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
    listing = tmp_path / "tasks.json"
    listing.write_text(json.dumps([{"config": t.config, "required_env": t.required_env} for t in tasks]))
    env = {**os.environ, "SKY_RUNTIME_DIR": str(runtime), "HOME": str(runtime)}
    done = subprocess.run(
        [sys.executable, "-c", VALIDATOR, str(listing)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_every_exported_task_is_valid_skypilot_and_matches_the_offer(results, tmp_path):
    """Each provider family, spot and on-demand, single and multi-node: SkyPilot parses the task, knows the
    instance, its GPUs and the region, and the task says what the recommendation says (or, on a cloud SkyPilot
    cannot launch, what its launchable alternative says)."""
    exportable = results
    tasks = [build_task(r) for r in exportable]
    assert any(t.note for t in tasks) and any(not t.note for t in tasks)
    for task in tasks:
        assert yaml.safe_load(task.yaml) == task.config
    checked = _validate_with_skypilot(tasks, tmp_path)
    clouds = {c["cloud"] for c in checked}
    assert len(clouds) >= 8, clouds
    assert {c["use_spot"] for c in checked} == {True, False}
    assert max(c["num_nodes"] for c in checked) >= 1
    for result, task, seen in zip(exportable, tasks, checked):
        offer = task.offer
        assert (offer is result["offers"][0]) is (result["offers"][0]["provider"] in SKYPILOT_CLOUDS)
        assert (task.note is None) is (offer is result["offers"][0])
        assert seen["exists"], seen
        assert seen["cloud"] == offer["provider"] and seen["instance_type"] == offer["instance_type"]
        assert seen["accelerators"] == seen["task_accelerators"], seen
        assert sum(seen["accelerators"].values()) == offer["gpu_count"]
        if seen["region"] is not None:
            assert seen["region"] in seen["regions"], seen
        assert seen["use_spot"] is bool(offer["spot"])
        assert seen["num_nodes"] == offer.get("nodes", 1)
        assert (seen["recovery"] is not None) is bool(offer["spot"])
        assert task.launch_command.startswith("sky jobs launch" if offer["spot"] else "sky launch")
        envs = task.config["envs"]
        assert envs["METHOD"] == result["estimate"]["method"]
        assert envs["LAYOUT"] == offer["layout"]
        assert "DATASET" in task.required_env and envs["DATASET"] is None


def test_multi_node_plans_export_num_nodes(results):
    """A plan over several instances becomes num_nodes > 1 with per-node accelerators."""
    multi = [
        r for r in results if (r["offers"][0].get("nodes") or 1) > 1 and r["offers"][0]["provider"] in SKYPILOT_CLOUDS
    ]
    assert multi, "16 GPUs on aws (at most 8 per instance) must be a multi-node plan"
    task = build_task(multi[0])
    offer = multi[0]["offers"][0]
    assert task.config["num_nodes"] == offer["nodes"]
    assert task.config["resources"]["accelerators"].endswith(f":{offer['gpu_count']}")


def test_spot_tasks_checkpoint_to_a_bucket_at_the_spot_risk_interval(results):
    """Spot: managed-job recovery, checkpoints on a mounted bucket, interval from the spot-risk result."""
    spot = [r for r in results if r["offers"][0]["spot"] and r["offers"][0]["provider"] in SKYPILOT_CLOUDS]
    assert spot
    task = build_task(spot[0])
    assert task.config["resources"]["job_recovery"]["strategy"] == "FAILOVER"
    assert task.config["file_mounts"]["/checkpoints"]["mode"] == "MOUNT"
    hours = [
        r["params"]["checkpoint_interval_hours"]
        for r in spot[0]["offers"][0]["reasons"]
        if (r.get("params") or {}).get("checkpoint_interval_hours")
    ]
    if hours:
        assert task.config["envs"]["CHECKPOINT_EVERY_MINUTES"] == max(1, round(hours[0] * 60))


def test_comments_follow_the_users_language(advisor):
    """The YAML comments are in the conversation's language."""
    italian = build_task(advisor.respond("LoRA su Llama 3 8B, 10k esempi, su lambda"))
    english = build_task(advisor.respond("LoRA on Llama 3 8B, 10k examples, on lambda"))
    assert "# L'offerta consigliata" in italian.yaml and "# The recommended offer" in english.yaml


def test_an_offer_skypilot_cannot_launch_is_exported_as_the_best_launchable_alternative(advisor):
    """The recommended offer is on simplepod (the user asked for it; SkyPilot has no such cloud): the task launches
    the job ranked again on SkyPilot's clouds, and its first comment says which offer and why, in Italian."""
    from contract.jobspec import JobSpec
    from tools.ranking import rank_offers

    result = advisor.respond("LoRA su Llama 3 8B, 10k esempi, su simplepod")
    assert result["offers"] and {o["provider"] for o in result["offers"]} == {"simplepod"}  # the shipped snapshot
    task = build_task(result, db_path=advisor.db_path)
    expected = rank_offers(
        JobSpec.model_validate({**result["spec"], "providers": sorted(SKYPILOT_CLOUDS)}),
        db_path=advisor.db_path,
        limit=1,
    ).offers[0]
    assert (task.offer["provider"], task.offer["instance_type"]) == (expected.provider, expected.instance_type)
    assert task.config["resources"]["instance_type"] == expected.instance_type
    first = result["offers"][0]
    assert task.note.startswith(f"L'offerta consigliata, {first['total_gpus']}× {first['gpu']} su simplepod")
    assert "non si può avviare con SkyPilot" in task.note and f"{expected.gpu} su {expected.provider}" in task.note
    assert task.yaml.startswith("# L'offerta consigliata, ")
    assert "# L'alternativa avviabile all'offerta consigliata" in task.yaml

    # Without a job to rank again, the first launchable offer of the turn's own list is the alternative.
    listed = dict(result, spec={}, offers=[first, *expected_list(advisor)])
    assert build_task(listed, db_path=advisor.db_path).offer is listed["offers"][1]

    english = build_task(dict(result, language="en"), db_path=advisor.db_path)
    assert english.note.startswith("The recommended offer, ") and "cannot be launched with SkyPilot" in english.note


def expected_list(advisor) -> list[dict]:
    """Offers of a job on aws (all launchable)."""
    return advisor.respond("LoRA on Llama 3 8B, 10k examples, on aws")["offers"][:2]


def test_nothing_launchable_for_the_job_is_a_clear_error():
    """No offer on a cloud SkyPilot supports can run the job (here: no job to rank at all): one clear line."""
    with pytest.raises(ExportError, match="SkyPilot cannot launch on simplepod and no offer on a cloud it supports"):
        build_task({"offers": [{"provider": "simplepod", "instance_type": "x"}], "spec": {}, "language": "en"})


def test_cli_export_says_which_alternative_it_exported(advisor, tmp_path, capsys):
    """`export --from` on a simplepod recommendation writes the alternative's task and says so on stderr."""
    saved = tmp_path / "turn.json"
    saved.write_text(json.dumps(advisor.respond("LoRA on Llama 3 8B, 10k examples, on simplepod")))
    assert main(["export", "--from", str(saved), "--json"]) == 0
    captured = capsys.readouterr()
    printed = json.loads(captured.out)
    assert printed["note"] and printed["note"] in captured.err and "simplepod" in printed["note"]
    assert printed["offer"]["provider"] in SKYPILOT_CLOUDS
    assert printed["task"]["resources"]["instance_type"] == printed["offer"]["instance_type"]


def test_a_turn_without_offer_cannot_be_exported():
    """Nothing recommended yet: a clear error."""
    with pytest.raises(ExportError, match="no recommended offer"):
        build_task({"offers": [], "language": "en"})


def test_cli_export_writes_a_new_file_and_never_overwrites(advisor, tmp_path, capsys):
    """`export --from` writes the task; an existing file is kept unless --force."""
    saved = tmp_path / "turn.json"
    saved.write_text(json.dumps(advisor.respond("LoRA on Llama 3 8B, 10k examples, on aws, spot ok")))
    target = tmp_path / "task.yaml"
    target.write_text("my notes\n")
    assert main(["export", "--from", str(saved), "-o", str(target)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert target.read_text() == "my notes\n"
    assert main(["export", "--from", str(saved), "-o", str(target), "--force", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert yaml.safe_load(target.read_text()) == printed["task"]
    assert main(["export", "--from", str(tmp_path / "nope" / "t.json")]) == 2
    assert main(["export", "--from", str(saved), "-o", str(tmp_path / "no-dir" / "t.yaml")]) == 2
    assert not (tmp_path / "no-dir").exists()


def test_cli_export_of_a_conversation_reranks_its_current_job(tmp_path, capsys, monkeypatch):
    """`export --thread` uses the thread's current job (after a follow-up), not a stale answer."""
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    advisor = Advisor()
    try:
        first = advisor.respond("LoRA on Llama 3 8B, 10k examples, on aws, no spot")
        advisor.respond("spot is fine too", thread_id=first["thread_id"])
        expected = advisor.rerun_current_job(first["thread_id"])
        assert advisor.rerun_current_job("no-such-thread") is None
    finally:
        advisor.close()
    assert main(["export", "--thread", first["thread_id"], "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["task"]["resources"]["instance_type"] == expected["offers"][0]["instance_type"]
    assert printed["task"]["resources"]["use_spot"] is expected["offers"][0]["spot"]
    assert main(["export", "--thread", "no-such-thread"]) == 2
    assert "no job" in capsys.readouterr().err


def test_recommend_writes_the_skypilot_task_beside_its_answer(tmp_path, capsys, monkeypatch):
    """`recommend --skypilot FILE` answers as usual and writes the same task `export` builds; never over a file."""
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    target = tmp_path / "task.yaml"
    assert main(["recommend", "--json", "--skypilot", str(target), "LoRA on Llama 3 8B, 10k examples, on lambda"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert target.read_text() == build_task(result).yaml and "sky launch" in captured.err
    assert main(["recommend", "--skypilot", str(target), "LoRA on Llama 3 8B, 10k examples, on lambda"]) == 2
    assert "already exists" in capsys.readouterr().err
