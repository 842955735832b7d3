"""The chat answer as the CLI prints it at 80 columns: one snapshot per language, verdict then offers table.

Snapshots live in tests/snapshots/cli/; after an intended change to the wording, the catalog snapshot or the tools,
refresh them with `UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/test_conversation_cli.py` and review the diff.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOTS = Path(__file__).resolve().parent / "snapshots" / "cli"
MESSAGES = {
    "en": "LoRA on Mistral 7B, 50M tokens, budget $500, within 2 days",
    "it": "LoRA su Llama 3.1 8B, 20M token, budget 100 euro, entro 2 giorni",
    "id": "QLoRA pada Llama 3.1 8B, 20 juta token, anggaran 1 juta rupiah, selesai dalam 2 hari",
}
TABLE_HEADERS = {
    "en": ("Offers", "provider", "instance", "hours"),
    "it": ("Offerte", "provider", "istanza", "ore"),
    "id": ("Penawaran", "provider", "instans", "jam"),
}


ISSUE_MESSAGES = {  # requests whose offers have long instance names (issue 11)
    "it": "QLoRA su Llama 3 70B, 20k esempi, budget 300 euro, vanno bene le spot?",
    "id": "QLoRA pada Llama 3 70B, 20 ribu contoh, anggaran 5 juta rupiah, boleh spot",
    "en": "Full fine-tune Qwen2.5 7B on 200M tokens, budget $300",
}


def _cli(home: Path, *args: str, columns: int = 80) -> subprocess.CompletedProcess:
    """Run the CLI of this checkout at 80 columns (or `columns`), offline, with a private data dir."""
    env = {key: value for key, value in os.environ.items() if key not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env |= {"GPU_ADVISOR_HOME": str(home), "COLUMNS": str(columns), "TERM": "dumb", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-c", "from cli.app import run; run()", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
        env=env,
    )


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("cli-home")


@pytest.mark.parametrize("language", ["en", "it", "id"])
def test_cli_answer_matches_its_snapshot_at_80_columns(home, language):
    done = _cli(home, "recommend", MESSAGES[language])
    assert done.returncode == 0, done.stderr
    text = re.sub(r"thread [0-9a-f]{32}", "thread <id>", done.stdout)
    text = "\n".join(line.rstrip() for line in text.splitlines()) + "\n"
    assert all(len(line) <= 80 for line in text.splitlines())
    lines = [line for line in text.splitlines() if line.strip()]
    title, provider, instance, hours = TABLE_HEADERS[language]
    table_at = next(i for i, line in enumerate(lines) if line.split("   (")[0] == title)
    assert table_at <= 4  # the offers table comes right after the verdict
    assert provider in lines[table_at + 1] + lines[table_at + 2] and instance in lines[table_at + 2]
    assert hours in lines[table_at + 2]
    path = SNAPSHOTS / f"recommend.{language}.txt"
    if os.environ.get("UPDATE_SNAPSHOTS") or not path.exists():
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def test_an_unknown_thread_says_it_starts_a_new_conversation(home):
    done = _cli(home, "recommend", "--thread", "no-such-thread", "QLoRA on Llama 3.1 8B")
    assert done.returncode == 0, done.stderr
    assert "Conversation no-such-thread not found: starting a new one" in done.stdout
    again = _cli(home, "recommend", "--thread", "no-such-thread", "make it 2 GPUs")
    assert "not found" not in again.stdout


def test_the_offers_table_has_no_duplicate_rows(home):
    done = _cli(home, "recommend", "--json", "Full fine-tune Qwen2.5 7B on 200M tokens, budget $300")
    assert done.returncode == 0, done.stderr
    shown = _cli(home, "recommend", "Full fine-tune Qwen2.5 7B on 200M tokens, budget $300").stdout
    rows = re.findall(r"^\s*(?:▶\s+)?(\S+) · (\S+)\s+(\d+× \S+).*\n\s+(\S+)\s*$", shown, re.MULTILINE)
    assert rows and len(rows) == len(set(rows))


def _shown_offers(result: dict) -> list[dict]:
    """The offers the table shows: the first five distinct rentals."""
    keys = ("provider", "instance_type", "region", "spot", "nodes")
    shown: list[dict] = []
    for offer in result["offers"]:
        if all(any(offer[k] != seen[k] for k in keys) for seen in shown):
            shown.append(offer)
    return shown[:5]


@pytest.mark.parametrize(("language", "columns"), [("it", 80), ("id", 80), ("en", 80), ("it", 120)])
def test_no_instance_name_is_split_across_lines(home, language, columns):
    result = json.loads(_cli(home, "recommend", "--json", ISSUE_MESSAGES[language]).stdout)
    done = _cli(home, "recommend", ISSUE_MESSAGES[language], columns=columns)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert all(len(line.rstrip()) <= columns for line in lines)
    offers = _shown_offers(result)
    assert offers and any(len(offer["instance_type"]) > 15 for offer in offers)
    for offer in offers:
        region = offer["region"] if offer["region"] not in (None, "", "UNSPECIFIED") else "-"
        place = [i for i, line in enumerate(lines) if f"{offer['provider']} · {region} " in line]
        assert place, f"{offer['provider']} · {region} not shown"
        name = offer["instance_type"]
        if columns >= 120:  # wide: one line per offer, the instance in its own column
            assert any(re.search(rf"\s{re.escape(name)}\s", lines[i]) for i in place), name
        else:  # 80 columns: the full instance name is the line right under "provider · region", never broken
            assert any(lines[i + 1].strip() == name for i in place), name
    recommended = [line for line in lines if line.lstrip().startswith("▶ ")]
    verdict = result["verdict"]
    assert len(recommended) == 1 and f"{verdict['provider']} · " in recommended[0]


def test_chat_json_prints_one_result_per_turn_on_one_thread(home):
    env = {key: value for key, value in os.environ.items() if key not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env |= {"GPU_ADVISOR_HOME": str(home), "COLUMNS": "80"}
    done = subprocess.run(
        [sys.executable, "-c", "from cli.app import run; run()", "chat", "--json"],
        input="QLoRA on Llama 3.1 8B, 10M tokens\nfaster?\nwhat's the weather in Rome tomorrow?\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    turns = [json.loads(line) for line in done.stdout.splitlines()]
    assert [t["verdict"]["answer_kind"] for t in turns] == ["recommendation", "recommendation", "declined"]
    assert len({t["thread_id"] for t in turns}) == 1 and turns[1]["changed"] == ["prefer"]
