"""Block Kit validator, splitters and rendering (their output checked by slack_sdk's models), mrkdwn, strings files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contract.languages import LANGUAGES
from tests.slack_fakes import offline_advisor
from tests.slack_sdk_check import sdk_problems
from web.slack.blockkit import (
    MAX_BLOCKS,
    MAX_SECTION_TEXT,
    BlockKitError,
    SlackMessage,
    problems,
    split_blocks,
    split_text,
    validate,
)
from web.slack.i18n import strings
from web.slack.mrkdwn import escape, to_mrkdwn, user_text
from web.slack.render import render_result, section

JOBS = {
    "it": "QLoRA Llama 3 70B entro domani, vanno bene le spot?",
    "id": "fine-tuning LoRA Mistral 7B, budget 50 USD, pakai spot aman?",
    "en": "full fine-tune llama-3.1-8b on H100, done within 10 hours",
}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Real offline advisor results, one job per language, plus an FAQ and an ask-back."""
    with offline_advisor(tmp_path_factory.mktemp("advisor")) as advisor:
        out = {lang: advisor.respond(job) for lang, job in JOBS.items()}
        out["faq"] = advisor.respond("can I use spot instances for fine-tuning?")
        out["ask_back"] = advisor.respond("voglio fare fine-tuning")
    return out


def _shape(blocks: list[dict]) -> SlackMessage:
    """A message with these blocks."""
    return SlackMessage(text="fallback", blocks=blocks)


def test_validator_names_every_violation() -> None:
    blocks = [
        section("x" * (MAX_SECTION_TEXT + 1)),
        {"type": "section", "fields": [{"type": "mrkdwn", "text": "f"}] * 11},
        {"type": "header", "text": {"type": "mrkdwn", "text": "h"}},
        {"type": "context", "elements": []},
        {
            "type": "actions",
            "elements": [{"type": "button", "action_id": "a", "text": {"type": "plain_text", "text": "b" * 80}}] * 2,
        },
        {"type": "table", "rows": [[{"type": "raw_text", "text": "c"}] * 21]},
        {"type": "table", "rows": [[{"type": "raw_text", "text": "c"}]] * 101},
        {"type": "image"},
    ]
    found = problems(_shape(blocks))
    expected = [
        "blocks[0].text: text has 3001",
        "blocks[1]: 11 fields",
        "blocks[2].text: must be a text object",
        "blocks[3]: a context needs",
        "blocks[4].elements[0].text: text has 80",
        "blocks[4].elements[1]: action_id must be unique",
        "blocks[5].rows[0]: 1 to 20 cells",
        "blocks[6]: a table needs 1 to 100 rows",
        "2 tables",
        "blocks[7]: unsupported block type",
    ]
    for fragment in expected:
        assert any(fragment in problem for problem in found), (fragment, found)
    with pytest.raises(BlockKitError):
        validate(_shape(blocks))
    assert problems(_shape([section("ok"), {"type": "divider"}])) == []
    assert problems(_shape([section("ok")] * (MAX_BLOCKS + 1))) == [f"{MAX_BLOCKS + 1} blocks, the limit is 50"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(list("ab &<>\n*") + ["word ", "\n\n", "x" * 400]), max_size=400).map("".join),
    st.integers(min_value=20, max_value=MAX_SECTION_TEXT),
)
def test_split_text_keeps_every_word_within_the_limit(text: str, limit: int) -> None:
    pieces = split_text(text, limit)
    assert all(len(piece) <= limit for piece in pieces)
    assert "".join("".join(pieces).split()) == "".join(text.split())  # nothing lost but the whitespace at cuts


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["short", "long", "table", "divider"]), min_size=0, max_size=160))
def test_split_blocks_always_yields_valid_messages_in_order(kinds: list[str]) -> None:
    table = {"type": "table", "rows": [[{"type": "raw_text", "text": "a"}]]}
    make = {
        "short": lambda i: section(f"s{i}"),
        "long": lambda i: section(f"L{i} " + "word " * 1500),
        "table": lambda i: table,
        "divider": lambda i: {"type": "divider"},
    }
    blocks = [make[kind](i) for i, kind in enumerate(kinds)]
    groups = split_blocks(blocks)
    for group in groups:
        assert sdk_problems(group) == []
    flat = [b for g in groups for b in g]
    markers = [
        b["text"]["text"].split()[0] for b in flat if b["type"] == "section" and b["text"]["text"].split()[0][0] in "sL"
    ]
    assert markers == [b["text"]["text"].split()[0] for b in blocks if b["type"] == "section"]
    assert sum(b["type"] == "table" for b in flat) == kinds.count("table")


def test_long_answer_is_split_into_sections_and_messages(results: dict[str, dict]) -> None:
    result = dict(results["en"], answer="\n\n".join([results["en"]["answer"]] * 150))
    messages = render_result(result)
    assert len(messages) > 1
    sections = [b for m in messages for b in m.blocks if b["type"] == "section"]
    assert all(len(b["text"]["text"]) <= MAX_SECTION_TEXT for b in sections)
    assert sum(b["type"] == "actions" for b in messages[-1].blocks) == 1
    assert all(sdk_problems(m.blocks) == [] for m in messages)
    assert messages[0].text.endswith(f"(part 1 of {len(messages)})")


@pytest.mark.parametrize("kind", ["it", "id", "en", "faq", "ask_back"])
def test_real_results_render_to_valid_messages_both_ways(results: dict[str, dict], kind: str) -> None:
    result = results[kind]
    for tables in (True, False):
        messages = render_result(result, tables=tables)
        assert all(sdk_problems(m.blocks) == [] for m in messages)
        kinds = [b["type"] for m in messages for b in m.blocks]
        if kind in ("it", "id", "en"):
            assert kinds[0] == "header" and kinds[-1] == "actions"
            assert ("table" in kinds) is tables
            table_rows = (
                len(next(b for m in messages for b in m.blocks if b["type"] == "table")["rows"]) if tables else None
            )
            assert table_rows in (None, min(5, len(result["offers"])) + 1)
        if kind == "faq":
            assert "actions" not in kinds and "context" in kinds


def test_escape_defuses_mentions_links_and_markup() -> None:
    hostile = "<!channel> <@U123> <https://evil.example|click> @here & @everyone"
    escaped = escape(hostile)
    assert "<" not in escaped and ">" not in escaped and "&amp;" in escaped
    assert "@here" not in escaped and "@everyone" not in escaped
    assert to_mrkdwn("**Bold** and\n- item <b>") == "*Bold* and\n• item &lt;b&gt;"


def test_user_text_strips_the_mention_decodes_links_and_caps_length() -> None:
    assert user_text("<@U0BOT> QLoRA &amp; <https://hf.co/x|hf.co/x> ok") == ("QLoRA & hf.co/x ok", False)
    assert user_text("<@U0BOT>") == ("", False)
    text, cut = user_text("a" * 5000, limit=100)
    assert cut and len(text) == 100


def test_strings_files_have_the_same_keys_in_every_language() -> None:
    def shape(value: object) -> object:
        """Keys (recursively) and list lengths, without the texts."""
        if isinstance(value, dict):
            return {k: shape(v) for k, v in value.items()}
        return len(value) if isinstance(value, list) else "text"

    shapes = {lang: shape(strings(lang)) for lang in LANGUAGES}
    assert shapes["it"] == shapes["en"] == shapes["id"]
    for lang in LANGUAGES:
        placeholders = {
            k: sorted(set(__import__("re").findall(r"\{(\w+)\}", v)))
            for k, v in strings(lang).items()
            if isinstance(v, str)
        }
        english = {
            k: sorted(set(__import__("re").findall(r"\{(\w+)\}", v)))
            for k, v in strings("en").items()
            if isinstance(v, str)
        }
        assert placeholders == english, lang


def test_snapshots_are_valid_block_kit() -> None:
    folder = Path(__file__).parent / "snapshots" / "slack"
    files = sorted(folder.glob("*.json"))
    assert files
    for path in files:
        payload = json.loads(path.read_text(encoding="utf-8"))
        assert payload["text"] and sdk_problems(payload["blocks"]) == [], path.name
